// Interface listings as real hosts print them: ip -o addr, the ifconfig
// formats of net-tools (old and new), BSD and busybox, and /proc/net.
#include "runner/probe/net_interfaces.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace runner {
namespace {

using Addresses = std::vector<InterfaceAddress>;

TEST(IpAddr, ReadsEveryFamilyAndStripsPeerSuffixesAndScopes) {
  std::string listing =
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
      "1: lo    inet6 ::1/128 scope host \\       valid_lft forever preferred_lft forever\n"
      "4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\\       valid_lft forever\n"
      "4: eth0    inet6 fd00::2/64 scope global nodad \\       valid_lft forever\n"
      "4: eth0    inet6 fe80::fc:ff:fe00:1/64 scope link \\       valid_lft forever\n"
      "7: veth3c1@if6    inet6 fe80::1/64 scope link \\       valid_lft forever\n"
      "9: ib0    inet 10.1.0.3/16 brd 10.1.255.255 scope global ib0\n";
  EXPECT_EQ(parse_ip_addr(listing),
            (Addresses{{"lo", "127.0.0.1", 8, false},
                       {"lo", "::1", 128, true},
                       {"eth0", "192.0.2.2", 24, false},
                       {"eth0", "fd00::2", 64, true},
                       {"eth0", "fe80::fc:ff:fe00:1", 64, true},
                       {"veth3c1", "fe80::1", 64, true},
                       {"ib0", "10.1.0.3", 16, false}}));
}

TEST(IpAddr, SkipsLinkLinesGarbageAndRepeats) {
  std::string listing =
      "2: eth0    link/ether 02:fc:00:00:00:01 brd ff:ff:ff:ff:ff:ff\n"
      "\n"
      "garbage\n"
      "4: eth0    inet not-an-address/24 scope global eth0\n"
      "4: eth0    inet 192.0.2.2/24 scope global eth0\n"
      "4: eth0    inet 192.0.2.2/24 scope global eth0\n"
      "5: wg0    inet 10.9.0.1 peer 10.9.0.2/32 scope global wg0";
  EXPECT_EQ(parse_ip_addr(listing),
            (Addresses{{"eth0", "192.0.2.2", 24, false}, {"wg0", "10.9.0.1", -1, false}}));
}

TEST(Ifconfig, ReadsTheNewNetToolsFormat) {
  std::string listing =
      "eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1400\n"
      "        inet 192.0.2.2  netmask 255.255.255.0  broadcast 192.0.2.255\n"
      "        inet6 fd00::2  prefixlen 64  scopeid 0x0<global>\n"
      "        inet6 fe80::fc:ff:fe00:1  prefixlen 64  scopeid 0x20<link>\n"
      "        ether 02:fc:00:00:00:01  txqueuelen 1000  (Ethernet)\n"
      "\n"
      "ifb0: flags=130<BROADCAST,NOARP>  mtu 1500\n"
      "        ether 52:0a:8d:94:26:7f  txqueuelen 32  (Ethernet)\n"
      "\n"
      "lo: flags=73<UP,LOOPBACK,RUNNING>  mtu 65536\n"
      "        inet 127.0.0.1  netmask 255.0.0.0\n";
  EXPECT_EQ(parse_ifconfig(listing),
            (Addresses{{"eth0", "192.0.2.2", 24, false},
                       {"eth0", "fd00::2", 64, true},
                       {"eth0", "fe80::fc:ff:fe00:1", 64, true},
                       {"lo", "127.0.0.1", 8, false}}));
}

TEST(Ifconfig, ReadsTheOldNetToolsAndBusyboxFormat) {
  std::string listing =
      "docker0   Link encap:Ethernet  HWaddr 02:42:AC:11:00:01\n"
      "          inet addr:172.17.0.1  Bcast:172.17.255.255  Mask:255.255.0.0\n"
      "          inet6 addr: fe80::42:acff:fe11:1/64 Scope:Link\n"
      "          UP BROADCAST MULTICAST  MTU:1500  Metric:1\n"
      "eth0:1    Link encap:Ethernet  HWaddr 02:42:AC:11:00:02\n"
      "          inet addr:10.0.0.5  Bcast:10.0.0.255  Mask:255.255.255.0\n";
  EXPECT_EQ(parse_ifconfig(listing),
            (Addresses{{"docker0", "172.17.0.1", 16, false},
                       {"docker0", "fe80::42:acff:fe11:1", 64, true},
                       {"eth0:1", "10.0.0.5", 24, false}}));
}

TEST(Ifconfig, ReadsTheBsdFormatWithHexMasksAndScopes) {
  std::string listing =
      "lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
      "\tinet 127.0.0.1 netmask 0xff000000\n"
      "\tinet6 fe80::1%lo0 prefixlen 64 scopeid 0x1\n"
      "en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
      "\tinet 192.168.1.20 netmask 0xffffff00 broadcast 192.168.1.255\n"
      "\tinet 192.168.1.21 netmask 0xff00ff00 broadcast 192.168.1.255\n";
  EXPECT_EQ(parse_ifconfig(listing),
            (Addresses{{"lo0", "127.0.0.1", 8, false},
                       {"lo0", "fe80::1", 64, true},
                       {"en0", "192.168.1.20", 24, false},
                       {"en0", "192.168.1.21", -1, false}}));
}

TEST(Ifconfig, IgnoresIndentedLinesBeforeAnyInterfaceAndEmptyText) {
  EXPECT_TRUE(parse_ifconfig("        inet 192.0.2.2  netmask 255.255.255.0\n").empty());
  EXPECT_TRUE(parse_ifconfig("").empty());
  EXPECT_TRUE(parse_ip_addr("").empty());
}

constexpr const char* k_fib_trie =
    "Main:\n"
    "  +-- 0.0.0.0/0 3 0 5\n"
    "     |-- 0.0.0.0\n"
    "        /0 universe UNICAST\n"
    "     +-- 127.0.0.0/8 2 0 2\n"
    "        |-- 127.0.0.1\n"
    "           /32 host LOCAL\n"
    "     +-- 192.0.2.0/24 2 0 2\n"
    "        |-- 192.0.2.0\n"
    "           /24 link UNICAST\n"
    "        |-- 192.0.2.2\n"
    "           /32 host LOCAL\n"
    "        |-- 192.0.2.255\n"
    "           /32 link BROADCAST\n"
    "     |-- 10.1.0.3\n"
    "        /32 host LOCAL\n"
    "     |-- 10.9.9.9\n"
    "        /32 host LOCAL\n"
    "Local:\n"
    "        |-- 192.0.2.2\n"
    "           /32 host LOCAL\n";

constexpr const char* k_route =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    "ib0\t0000010A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
    "ib1\t0000010A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n";

TEST(ProcNet, ReadsIpv4FromTheTrieWithTheInterfaceOfTheMostSpecificRoute) {
  if (htonl(1) == 1) GTEST_SKIP() << "fixtures written on a little-endian host";
  std::string if_inet6 =
      "fd000000000000000000000000000002 04 40 00 82     eth0\n"
      "fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n"
      "00000000000000000000000000000001 01 80 10 80       lo\n"
      "short 01 80 10 80 lo\n";
  // 10.9.9.9 has no route (skipped); the default route does not count.
  EXPECT_EQ(parse_proc_net_addresses(if_inet6, k_fib_trie, k_route),
            (Addresses{{"lo", "127.0.0.1", 8, false},
                       {"eth0", "192.0.2.2", 24, false},
                       {"ib0", "10.1.0.3", 16, false},
                       {"eth0", "fd00::2", 64, true},
                       {"eth0", "fe80::fc:ff:fe00:1", 64, true},
                       {"lo", "::1", 128, true}}));
}

TEST(ProcNet, WithoutRoutesKnowsOnlyLoopback) {
  EXPECT_EQ(parse_proc_net_addresses("", k_fib_trie, ""),
            (Addresses{{"lo", "127.0.0.1", 8, false}}));
}

TEST(AddressKinds, LoopbackLinkLocalAndHostLocalInterfaces) {
  EXPECT_TRUE(is_loopback_address("127.0.0.1"));
  EXPECT_TRUE(is_loopback_address("127.1.2.3"));
  EXPECT_TRUE(is_loopback_address("::1"));
  EXPECT_FALSE(is_loopback_address("127.example.org"));
  EXPECT_FALSE(is_loopback_address("192.0.2.2"));
  EXPECT_FALSE(is_loopback_address("fd00::1"));
  EXPECT_TRUE(is_ipv6_link_local("fe80::1"));
  EXPECT_TRUE(is_ipv6_link_local("febf::1"));
  EXPECT_FALSE(is_ipv6_link_local("fec0::1"));
  EXPECT_FALSE(is_ipv6_link_local("fd00::1"));
  EXPECT_FALSE(is_ipv6_link_local("169.254.1.1"));
  EXPECT_FALSE(is_ipv6_link_local("node01"));
  for (const char* local : {"lo", "lo0", "docker0", "br-4f1e2a", "virbr0", "veth3c1", "cni0", "podman0",
                            "lxcbr0", "lxdbr0"}) {
    EXPECT_TRUE(is_host_local_interface(local)) << local;
  }
  for (const char* network : {"eth0", "ens5", "ib0", "bond0", "enp1s0f0", "lo0x", "wg0"}) {
    EXPECT_FALSE(is_host_local_interface(network)) << network;
  }
}

}  // namespace
}  // namespace runner
