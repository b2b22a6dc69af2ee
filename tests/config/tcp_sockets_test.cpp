#include "runner/config/tcp_sockets.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

// /proc/net/tcp and /proc/net/tcp6 of a host where sshd listens on 22, a
// client is connected from 29500, 31337 holds only a TIME_WAIT and 8080
// listens on IPv6.
constexpr const char* k_sockets =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
    "   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0\n"
    "   1: 0100007F:733C 0100007F:B2A4 01 00000000:00000000 00:00000000 00000000     0\n"
    "   2: 0100007F:7A69 0100007F:C350 06 00000000:00000000 03:00001729 00000000     0\n"
    "  sl  local_address                         remote_address                        st\n"
    "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A\n"
    "garbage\n";

TEST(TcpSockets, EachEntryHasItsLocalPortAndState) {
  std::vector<TcpSocket> sockets = tcp_sockets(k_sockets);
  ASSERT_EQ(sockets.size(), 4u);
  EXPECT_EQ(sockets[0].port, 22);
  EXPECT_EQ(sockets[0].state, k_tcp_listen);
  EXPECT_EQ(sockets[1].port, 29500);
  EXPECT_EQ(sockets[1].state, 0x01);
  EXPECT_EQ(sockets[2].port, 31337);
  EXPECT_EQ(sockets[2].state, 0x06);
  EXPECT_EQ(sockets[3].port, 8080);
  EXPECT_EQ(sockets[3].state, k_tcp_listen);
}

TEST(TcpSockets, PortsInUseAreThoseOfEverySocket) {
  EXPECT_EQ(ports_in_use(k_sockets), (std::set<int>{22, 29500, 31337, 8080}));
  EXPECT_TRUE(ports_in_use("").empty());
  // `runner check --net` cuts the lines after the local address.
  EXPECT_EQ(ports_in_use("   0: 00000000:7338\n   1: 0100007F:0016 01\n"),
            (std::set<int>{29496, 22}));
}

TEST(TcpSockets, ListeningPortsAreThoseOfListeningSocketsOnly) {
  EXPECT_EQ(listening_ports(k_sockets), (std::set<int>{22, 8080}));
  // A TIME_WAIT, an established socket, or a line cut before its state.
  EXPECT_TRUE(listening_ports("   2: 0100007F:7A69 0100007F:C350 06 00000000:00000000\n"
                              "   3: 0100007F:7A69 0100007F:C351 01\n"
                              "   4: 0100007F:7A69\n"
                              "   5: 0100007F:7A69 0100007F:C352\n")
                  .empty());
  // The state is the fourth column exactly: 0A elsewhere on the line is not it.
  EXPECT_TRUE(
      listening_ports("   6: 0100007F:7A69 0100007F:000A 06 0000000A:0000000A 0A\n").empty());
  EXPECT_TRUE(listening_ports("   7: 0100007F:7A69 0100007F:C350 0AB\n").empty());
}

}  // namespace
}  // namespace runner
