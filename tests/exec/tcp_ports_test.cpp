// Ports in use from /proc/net/tcp and tcp6, whole or cut after the local
// address, and the first free port.
#include "runner/exec/tcp_ports.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

TEST(TcpPorts, ReadsTheLocalPortOfEverySocketOfBothFamilies) {
  std::string listing =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
      "inode\n"
      "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
      "1216 1 000000001d6c2e43 100 0 0 10 0\n"
      "   1: 0100007F:7336 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000  1000        0 "
      "99 1\n"
      "  sl  local_address                         remote_address                        st\n"
      "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A\n"
      // Cut after the local address, as the survey sends them.
      "  12: 0000000000000000FFFF00000100007F:7337\n"
      "  13: 0100007F:FFFF\n";
  EXPECT_EQ(tcp_ports_in_use(listing), (std::set<int>{2024, 29494, 8080, 29495, 65535}));
}

TEST(TcpPorts, SkipsMalformedLines) {
  std::string listing =
      "garbage\n"
      "   0: 00000000\n"              // no port
      "   1: 0000000:07E8 x\n"        // 7 hex digits of address
      "   2: 00000000:7E8 x\n"        // 3 hex digits of port
      "   3: 00000000:07EG x\n"       // not hex
      "   4 00000000:07E8 x\n"        // no colon after the slot
      "\n";
  EXPECT_TRUE(tcp_ports_in_use(listing).empty());
  EXPECT_TRUE(tcp_ports_in_use("").empty());
}

TEST(FirstFreePort, SkipsPortsInUseAndPortsTakenForOtherHosts) {
  EXPECT_EQ(first_free_port(29500, {}, {}), 29500);
  EXPECT_EQ(first_free_port(29500, {29500, 29502}, {29501}), 29503);
  EXPECT_EQ(first_free_port(65535, {}, {}), 65535);
  EXPECT_EQ(first_free_port(65534, {65534}, {65535}), std::nullopt);
}

}  // namespace
}  // namespace runner
