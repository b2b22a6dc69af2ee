// hosts.yaml: host addresses, expansion of entries into slots and hosts,
// labels, and every configuration error with its position.
#include "runner/config/hosts.h"

#include <gtest/gtest.h>

#include "runner/config/config_error.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

// Labels of all slots, in fleet order.
std::vector<std::string> labels(const Fleet& fleet) {
  std::vector<std::string> out;
  for (const Slot& slot : fleet.slots) out.push_back(slot.label);
  return out;
}

std::vector<std::string> host_names(const Fleet& fleet) {
  std::vector<std::string> out;
  for (const Host& host : fleet.hosts) out.push_back(host.name);
  return out;
}

// The failure of parse_hosts for `text`, as the command line reports it.
ConfigError hosts_error(const std::string& text) {
  Result<Fleet> fleet = parse_hosts(text, "hosts.yaml");
  if (!fleet) return ConfigError(fleet.status());
  ADD_FAILURE() << "no error for:\n" << text;
  return ConfigError("none");
}

ConfigError address_error(std::string_view text) {
  Result<HostAddress> address = parse_host_address(text);
  if (!address) return ConfigError(address.status());
  ADD_FAILURE() << "no error for " << text;
  return ConfigError("none");
}

// The failure of load_hosts for `path`.
ConfigError load_error(const std::string& path) {
  Result<Fleet> fleet = load_hosts(path);
  if (!fleet) return ConfigError(fleet.status());
  ADD_FAILURE() << "no error for " << path;
  return ConfigError("none");
}

// --- parse_host_address ---------------------------------------------------

TEST(HostAddress, PlainHost) {
  HostAddress a = testing::value_of(parse_host_address("node01"));
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.host, "node01");
  EXPECT_EQ(a.port, 0);
  EXPECT_FALSE(a.local);
}

TEST(HostAddress, UserAndHost) {
  HostAddress a = testing::value_of(parse_host_address("alice@node01.example.com"));
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.host, "node01.example.com");
  EXPECT_EQ(a.port, 0);
}

TEST(HostAddress, HostAndPort) {
  HostAddress a = testing::value_of(parse_host_address("node01:2222"));
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.host, "node01");
  EXPECT_EQ(a.port, 2222);
}

TEST(HostAddress, UserHostAndPort) {
  HostAddress a = testing::value_of(parse_host_address("bob@10.0.0.4:22"));
  EXPECT_EQ(a.user, "bob");
  EXPECT_EQ(a.host, "10.0.0.4");
  EXPECT_EQ(a.port, 22);
}

TEST(HostAddress, BracketedIpv6WithPort) {
  HostAddress a = testing::value_of(parse_host_address("[::1]:2200"));
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 2200);
  EXPECT_FALSE(a.local);
}

TEST(HostAddress, BracketedIpv6WithoutPort) {
  HostAddress a = testing::value_of(parse_host_address("[fe80::1%eth0]"));
  EXPECT_EQ(a.host, "fe80::1%eth0");
  EXPECT_EQ(a.port, 0);
}

TEST(HostAddress, UserAndBracketedIpv6) {
  HostAddress a = testing::value_of(parse_host_address("carol@[2001:db8::7]:65535"));
  EXPECT_EQ(a.user, "carol");
  EXPECT_EQ(a.host, "2001:db8::7");
  EXPECT_EQ(a.port, 65535);
}

TEST(HostAddress, BareIpv6IsHostWithoutPort) {
  HostAddress a = testing::value_of(parse_host_address("2001:db8::7"));
  EXPECT_EQ(a.host, "2001:db8::7");
  EXPECT_EQ(a.port, 0);
  HostAddress b = testing::value_of(parse_host_address("dave@::1"));
  EXPECT_EQ(b.user, "dave");
  EXPECT_EQ(b.host, "::1");
}

TEST(HostAddress, BareLocalhostIsLocal) {
  HostAddress a = testing::value_of(parse_host_address("localhost"));
  EXPECT_TRUE(a.local);
  EXPECT_EQ(a.host, "localhost");
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.port, 0);
}

TEST(HostAddress, LocalhostWithUserOrPortGoesThroughSsh) {
  HostAddress a = testing::value_of(parse_host_address("me@localhost"));
  EXPECT_FALSE(a.local);
  EXPECT_EQ(a.user, "me");
  EXPECT_EQ(a.host, "localhost");
  HostAddress b = testing::value_of(parse_host_address("localhost:22"));
  EXPECT_FALSE(b.local);
  EXPECT_EQ(b.port, 22);
  for (std::string_view text :
       {"me@127.0.0.1", "127.0.0.1:22", "[::1]:22", "me@::1", "LOCALHOST:2222", "me@Localhost"})
    EXPECT_FALSE(testing::value_of(parse_host_address(text)).local) << text;
}

// As Pegasus' is_localhost: the loopback addresses and any case of
// `localhost`, written alone, run locally.
TEST(HostAddress, LoopbackNamesAloneAreLocal) {
  for (std::string_view text : {"localhost", "127.0.0.1", "::1", "LOCALHOST", "Localhost"}) {
    HostAddress a = testing::value_of(parse_host_address(text));
    EXPECT_TRUE(a.local) << text;
    EXPECT_EQ(a.host, text);
    EXPECT_EQ(a.user, "");
    EXPECT_EQ(a.port, 0);
  }
}

TEST(HostAddress, UserIsEverythingBeforeTheLastAt) {
  HostAddress a = testing::value_of(parse_host_address("a@b@node"));
  EXPECT_EQ(a.user, "a@b");
  EXPECT_EQ(a.host, "node");
}

TEST(HostAddress, Malformed) {
  for (std::string_view bad : {"", "@node", "user@", "node:", ":22", "node:abc", "node:0",
                               "node:65536", "node:123456", "node:-1", "node:2x", "[::1", "[::1]22",
                               "[::1]:", "[]:22", "user@:22", "no de", "node\t"}) {
    ConfigError error = address_error(bad);
    EXPECT_NE(std::string(error.what()).find("bad host address"), std::string::npos) << bad;
    EXPECT_EQ(error.line(), 0) << bad;
  }
}

TEST(HostAddress, MalformedPortMessageSaysWhatIsAllowed) {
  EXPECT_NE(address_error("node:99999").detail().find("1 to 65535"), std::string::npos);
}

// --- parse_hosts: expansion ----------------------------------------------

TEST(Hosts, ScalarEntriesAreOneSlotEach) {
  Fleet fleet = testing::value_of(parse_hosts("- node01\n- node02\n", "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 2u);
  ASSERT_EQ(fleet.slots.size(), 2u);
  EXPECT_EQ(host_names(fleet), (std::vector<std::string>{"node01", "node02"}));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"node01", "node02"}));
  EXPECT_EQ(fleet.hosts[1].slots, std::vector<int>{1});
  EXPECT_EQ(fleet.slots[1].host, 1);
  EXPECT_EQ(fleet.slots[1].index, 0);
  EXPECT_TRUE(fleet.slots[0].params.empty());
  EXPECT_EQ(fleet.hosts[0].line, 1);
  EXPECT_EQ(fleet.hosts[1].line, 2);
}

TEST(Hosts, SpecExample) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- node01                       # one host, one slot\n"
      "- hostname: [node02, node03]   # two hosts ...\n"
      "  gpu: [0, 1, 2, 3]            # ... x four GPUs = 8 slots\n"
      "- hostname: user@node04:2222   # user and port may be written inline\n"
      "  gpu: [0, 1]\n"
      "- localhost                    # runs locally, no SSH\n",
      "hosts.yaml"));
  EXPECT_EQ(host_names(fleet), (std::vector<std::string>{"node01", "node02", "node03",
                                                         "user@node04:2222", "localhost"}));
  ASSERT_EQ(fleet.slots.size(), 12u);
  ASSERT_GE(fleet.hosts.size(), 5u);
  EXPECT_EQ(fleet.hosts[1].slots.size(), 4u);
  EXPECT_EQ(fleet.hosts[3].address.user, "user");
  EXPECT_EQ(fleet.hosts[3].address.host, "node04");
  EXPECT_EQ(fleet.hosts[3].address.port, 2222);
  EXPECT_TRUE(fleet.hosts[4].address.local);
  EXPECT_FALSE(fleet.hosts[0].address.local);
  EXPECT_EQ(fleet.hosts[3].line, 4);
  EXPECT_EQ(fleet.slots[4].label, "node02 gpu=3");
  EXPECT_EQ(fleet.slots[10].label, "user@node04:2222 gpu=1");
}

TEST(Hosts, ProductOrderHostnameSlowestLastKeyFastest) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: [a, b]\n"
      "  gpu: [0, 1]\n"
      "  container: [x, y, z]\n",
      "hosts.yaml"));
  EXPECT_EQ(labels(fleet),
            (std::vector<std::string>{
                "a gpu=0 container=x", "a gpu=0 container=y", "a gpu=0 container=z",
                "a gpu=1 container=x", "a gpu=1 container=y", "a gpu=1 container=z",
                "b gpu=0 container=x", "b gpu=0 container=y", "b gpu=0 container=z",
                "b gpu=1 container=x", "b gpu=1 container=y", "b gpu=1 container=z"}));
  ASSERT_GE(fleet.slots.size(), 11u);
  const Slot& slot = fleet.slots[10];
  EXPECT_EQ(slot.host, 1);
  EXPECT_EQ(slot.index, 4);
  EXPECT_EQ(slot.params, (Params{{"gpu", "1"}, {"container", "y"}}));
  ASSERT_GE(fleet.hosts.size(), 2u);
  EXPECT_EQ(fleet.hosts[1].slots, (std::vector<int>{6, 7, 8, 9, 10, 11}));
}

TEST(Hosts, HostnameKeyNeedNotComeFirst) {
  Fleet fleet = testing::value_of(parse_hosts("- gpu: [0, 1]\n  hostname: [a, b]\n", "hosts.yaml"));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"a gpu=0", "a gpu=1", "b gpu=0", "b gpu=1"}));
}

TEST(Hosts, ScalarParameterIsAListOfOne) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: a\n  container: c1\n  gpu: [0, 1]\n", "hosts.yaml"));
  EXPECT_EQ(labels(fleet),
            (std::vector<std::string>{"a container=c1 gpu=0", "a container=c1 gpu=1"}));
}

TEST(Hosts, ValuesAreKeptAsWritten) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: a\n  flag: true\n  ratio: 0.50\n  quoted: \"x y\"\n  blank: ''\n", "hosts.yaml"));
  ASSERT_GE(fleet.slots.size(), 1u);
  EXPECT_EQ(fleet.slots[0].params,
            (Params{{"flag", "true"}, {"ratio", "0.50"}, {"quoted", "x y"}, {"blank", ""}}));
}

TEST(Hosts, MappingWithOnlyHostnameIsOneSlot) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: node01\n", "hosts.yaml"));
  ASSERT_EQ(fleet.slots.size(), 1u);
  EXPECT_EQ(fleet.slots[0].label, "node01");
}

TEST(Hosts, FlowMappingEntries) {
  Fleet fleet = testing::value_of(parse_hosts("[{hostname: a, gpu: [0, 1]}, b]", "hosts.yaml"));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"a gpu=0", "a gpu=1", "b"}));
}

TEST(Hosts, AnonymousSlots) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: node01\n  slots: 3\n", "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 1u);
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"node01 #0", "node01 #1", "node01 #2"}));
  ASSERT_GE(fleet.slots.size(), 3u);
  EXPECT_EQ(fleet.slots[2].index, 2);
  EXPECT_TRUE(fleet.slots[2].params.empty());
}

// Pegasus' job-slots files write the count as a one-element list too.
TEST(Hosts, SlotsAsAOneElementList) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: node01\n  slots: [4]\n- hostname: node02\n  slots:\n"
      "    - 2\n",
      "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 2u);
  EXPECT_EQ(fleet.hosts[0].slots.size(), 4u);
  EXPECT_EQ(fleet.hosts[1].slots.size(), 2u);
}

TEST(Hosts, OneAnonymousSlotIsJustTheHostname) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: node01\n  slots: 1\n", "hosts.yaml"));
  EXPECT_EQ(labels(fleet), std::vector<std::string>{"node01"});
}

TEST(Hosts, AnonymousSlotsPerHostname) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: [a, b]\n  slots: 2\n", "hosts.yaml"));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"a #0", "a #1", "b #0", "b #1"}));
  ASSERT_GE(fleet.hosts.size(), 2u);
  EXPECT_EQ(fleet.hosts[1].slots, (std::vector<int>{2, 3}));
}

TEST(Hosts, AnonymousSlotsForEachElementOfTheProduct) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: a\n  slots: 2\n  gpu: [0, 1]\n", "hosts.yaml"));
  EXPECT_EQ(labels(fleet),
            (std::vector<std::string>{"a gpu=0 #0", "a gpu=0 #1", "a gpu=1 #2", "a gpu=1 #3"}));
  ASSERT_GE(fleet.slots.size(), 4u);
  EXPECT_EQ(fleet.slots[3].params, (Params{{"gpu", "1"}}));
  EXPECT_EQ(fleet.slots[3].index, 3);
}

TEST(Hosts, SameHostnameInTwoEntriesIsOneHost) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: node01\n  gpu: [0, 1]\n- node02\n- hostname: node01\n  gpu: 2\n", "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 2u);
  EXPECT_EQ(fleet.hosts[0].slots, (std::vector<int>{0, 1, 3}));
  ASSERT_GE(fleet.slots.size(), 4u);
  EXPECT_EQ(fleet.slots[3].host, 0);
  EXPECT_EQ(fleet.slots[3].index, 2);
  EXPECT_EQ(fleet.slots[3].label, "node01 gpu=2");
  EXPECT_EQ(fleet.hosts[0].line, 1);
}

TEST(Hosts, RepeatedBareHostnameGetsNumberedSlots) {
  Fleet fleet = testing::value_of(parse_hosts("- node01\n- node01\n- node02\n", "hosts.yaml"));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"node01 #0", "node01 #1", "node02"}));
  ASSERT_GE(fleet.hosts.size(), 1u);
  EXPECT_EQ(fleet.hosts[0].slots, (std::vector<int>{0, 1}));
}

TEST(Hosts, IdenticalParamsInTwoEntriesStayDistinguishable) {
  Fleet fleet =
      testing::value_of(parse_hosts("- hostname: a\n  gpu: 0\n- hostname: a\n  gpu: [0, 1]\n", "hosts.yaml"));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"a gpu=0 #0", "a gpu=0 #1", "a gpu=1"}));
}

TEST(Hosts, HostnameTemplateFromEntryParameters) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: gpu-<<rack>>-{{ n }}\n"
      "  rack: [r1, r2]\n"
      "  n: [1, 2]\n",
      "hosts.yaml"));
  EXPECT_EQ(host_names(fleet),
            (std::vector<std::string>{"gpu-r1-1", "gpu-r1-2", "gpu-r2-1", "gpu-r2-2"}));
  ASSERT_GE(fleet.slots.size(), 2u);
  EXPECT_EQ(fleet.slots[1].label, "gpu-r1-2 rack=r1 n=2");
  ASSERT_GE(fleet.hosts.size(), 3u);
  EXPECT_EQ(fleet.hosts[2].address.host, "gpu-r2-1");
}

TEST(Hosts, HostnameTemplateGroupsSlotsByRenderedName) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: [\"node<<n>>\", \"user@node<<n>>:2222\"]\n"
      "  n: [1, 2]\n"
      "  gpu: [0, 1]\n",
      "hosts.yaml"));
  EXPECT_EQ(host_names(fleet),
            (std::vector<std::string>{"node1", "node2", "user@node1:2222", "user@node2:2222"}));
  ASSERT_GE(fleet.hosts.size(), 4u);
  EXPECT_EQ(fleet.hosts[0].slots.size(), 2u);
  EXPECT_EQ(fleet.slots[fleet.hosts[3].slots[1]].label, "user@node2:2222 n=2 gpu=1");
  EXPECT_EQ(fleet.hosts[3].address.port, 2222);
}

TEST(Hosts, HostnameTemplateWithReplace) {
  Fleet fleet =
      testing::value_of(parse_hosts("- hostname: <<replace site \".\" \"-\">>\n  site: a.b.c\n", "hosts.yaml"));
  EXPECT_EQ(host_names(fleet), std::vector<std::string>{"a-b-c"});
}

TEST(Hosts, LocalhostEntries) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- localhost\n- hostname: localhost:2222\n- hostname: me@localhost\n- 127.0.0.1\n"
      "- hostname: \"::1\"\n  gpu: [0, 1]\n- LOCALHOST\n",
      "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 6u);
  EXPECT_TRUE(fleet.hosts[0].address.local);
  EXPECT_FALSE(fleet.hosts[1].address.local);
  EXPECT_FALSE(fleet.hosts[2].address.local);
  EXPECT_TRUE(fleet.hosts[3].address.local);
  EXPECT_TRUE(fleet.hosts[4].address.local);
  EXPECT_TRUE(fleet.hosts[5].address.local);
}

TEST(Hosts, Ipv6Hostnames) {
  Fleet fleet = testing::value_of(parse_hosts("- \"[::1]:2200\"\n- hostname: \"[::1]\"\n", "hosts.yaml"));
  ASSERT_GE(fleet.hosts.size(), 2u);
  EXPECT_EQ(fleet.hosts[0].address.host, "::1");
  EXPECT_EQ(fleet.hosts[0].address.port, 2200);
  EXPECT_EQ(fleet.hosts[1].address.port, 0);
}

TEST(Hosts, CommentsAndBlankLinesAreIgnored) {
  Fleet fleet = testing::value_of(parse_hosts("# fleet\n\n- node01  # first\n\n# end\n", "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 1u);
  EXPECT_EQ(fleet.hosts[0].line, 3);
}

// --- parse_hosts: errors ---------------------------------------------------

void expect_error(const std::string& text, int line, int column, const std::string& needle) {
  ConfigError error = hosts_error(text);
  EXPECT_EQ(error.file(), "hosts.yaml") << text;
  EXPECT_EQ(error.line(), line) << text << "\n" << error.what();
  EXPECT_EQ(error.column(), column) << text << "\n" << error.what();
  EXPECT_NE(error.detail().find(needle), std::string::npos)
      << "'" << needle << "' not in: " << error.what();
}

TEST(HostsErrors, EmptyDocument) {
  expect_error("", 0, 0, "no hosts");
  expect_error("# nothing yet\n", 0, 0, "no hosts");
}

TEST(HostsErrors, EmptyList) { expect_error("[]\n", 1, 1, "no hosts"); }

TEST(HostsErrors, DocumentNotASequence) {
  expect_error("hostname: node01\n", 1, 1, "must be a YAML list");
  expect_error("\nnode01\n", 2, 1, "must be a YAML list");
}

TEST(HostsErrors, MappingWithoutHostname) {
  expect_error("- node01\n- gpu: [0, 1]\n  host: node02\n", 2, 3, "no `hostname`");
}

TEST(HostsErrors, ParameterValueIsAMapping) {
  expect_error("- hostname: a\n  gpu:\n    x: 1\n", 3, 5, "`gpu` is a mapping");
}

TEST(HostsErrors, ParameterValueIsNull) {
  expect_error("- hostname: a\n  gpu:\n  b: 1\n", 2, 3, "`gpu` has no value");
  expect_error("- hostname: a\n  gpu: ~\n", 2, 3, "`gpu` has no value");
}

TEST(HostsErrors, HostnameIsNull) {
  expect_error("- hostname:\n", 1, 3, "`hostname` has no value");
}

TEST(HostsErrors, EmptyLists) {
  expect_error("- hostname: a\n  gpu: []\n", 2, 8, "`gpu` is an empty list");
  expect_error("- hostname: []\n", 1, 13, "`hostname` is an empty list");
}

TEST(HostsErrors, ListElementNotAScalar) {
  expect_error("- hostname: a\n  gpu: [0, [1, 2]]\n", 2, 12, "every element of `gpu`");
  expect_error("- hostname: a\n  gpu:\n    - 0\n    - x: 1\n", 4, 7, "every element of `gpu`");
  expect_error("- hostname: [a, {b: 1}]\n", 1, 17, "every element of `hostname`");
}

TEST(HostsErrors, EntryIsAList) { expect_error("- node01\n- [a, b]\n", 2, 3, "not a list"); }

TEST(HostsErrors, EmptyEntry) {
  expect_error("- node01\n-\n- node02\n", 2, 1, "empty host entry");
  expect_error("- node01\n- ~\n", 2, 1, "empty host entry");
  expect_error("- node01\n-   \n\n- node02\n", 2, 1, "empty host entry");
  expect_error("- node01\n-\n", 2, 1, "empty host entry");
}

TEST(HostsErrors, UndefinedVariableInHostname) {
  expect_error("- hostname: a\n- hostname: node<<n>>\n  gpu: 0\n", 2, 13,
               "uses `n`, which this entry does not define; add `n:`");
  expect_error("- node{{ x }}\n", 1, 3, "uses `x`");
}

TEST(HostsErrors, UnknownHelperInHostname) {
  expect_error("- hostname: node{{ shout n }}\n  n: 1\n", 1, 13, "helper `shout`");
}

TEST(Hosts, HostnameTakesHelpers) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: <<to_lower_case name>>-<<#if (eq n \"1\")>>a<<else>>b<</if>>\n"
      "  name: NODE\n  n: ['1', '2']\n",
      "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 2u);
  EXPECT_EQ(fleet.hosts[0].name, "node-a");
  EXPECT_EQ(fleet.hosts[1].name, "node-b");
}

TEST(HostsErrors, MalformedHostAddress) {
  expect_error("- node01\n- hostname: [a, \"b:99999\"]\n", 2, 17, "bad host address `b:99999`");
  expect_error("- \"user@\"\n", 1, 3, "bad host address");
}

TEST(HostsErrors, MalformedRenderedHostAddress) {
  expect_error("- hostname: node:<<p>>\n  p: http\n", 1, 13, "bad host address `node:http`");
}

TEST(HostsErrors, SlotsNotAPositiveInteger) {
  expect_error("- hostname: a\n  slots: 0\n", 2, 10, "positive integer");
  expect_error("- hostname: a\n  slots: -2\n", 2, 10, "positive integer");
  expect_error("- hostname: a\n  slots: four\n", 2, 10, "got `four`");
  expect_error("- hostname: a\n  slots: 1.5\n", 2, 10, "positive integer");
  expect_error("- hostname: a\n  slots: 99999999999\n", 2, 10, "positive integer");
  expect_error("- hostname: a\n  slots: 100001\n", 2, 10, "up to 100000");
  expect_error("- hostname: a\n  slots: [1, 2]\n", 2, 10, "one number, not a list");
  expect_error("- hostname: a\n  slots: []\n", 2, 10, "positive integer");
  expect_error("- hostname: a\n  slots: [0]\n", 2, 11, "got `0`");
  expect_error("- hostname: a\n  slots: [[2]]\n", 2, 11, "positive integer");
  expect_error("- hostname: a\n  slots:\n", 2, 3, "positive integer");
}

TEST(HostsErrors, DuplicateKey) {
  expect_error("- hostname: a\n  gpu: 0\n  gpu: 1\n", 3, 3, "`gpu` appears twice");
}

TEST(HostsErrors, NonScalarKey) {
  expect_error("- hostname: a\n  [x, y]: 1\n", 2, 3, "plain word");
}

TEST(HostsErrors, YamlSyntaxError) {
  ConfigError error = hosts_error("- node01\n- [node02\n");
  EXPECT_EQ(error.file(), "hosts.yaml");
  EXPECT_EQ(error.line(), 3);
  EXPECT_GT(error.column(), 0);
  EXPECT_EQ(std::string(error.what()).rfind("hosts.yaml:3:", 0), 0u) << error.what();
}

TEST(HostsErrors, NestingTooDeepIsNamedWithTheLimit) {
  std::string text =
      "- hostname: a\n  gpu: " + std::string(600, '[') + std::string(600, ']') + "\n";
  ConfigError error = hosts_error(text);
  EXPECT_EQ(error.file(), "hosts.yaml");
  EXPECT_EQ(error.line(), 2) << error.what();
  EXPECT_NE(error.detail().find("nested too deeply here (more than 499 levels)"), std::string::npos)
      << error.what();
  EXPECT_NE(error.detail().find("remove the extra nesting"), std::string::npos) << error.what();
}

TEST(HostsErrors, ACommaOutsideAnyListIsNamedNotReadForever) {
  expect_error("- node01\n, node02\n", 2, 1, "`,` outside of [ ] and { }");
  expect_error("- node01\n- node02\n  # more\n, 3]            # ... x four GPUs\n", 4, 1,
               "`,` outside of [ ] and { }");
  expect_error("[node01]\n  , node02\n", 2, 3, "`,` outside of [ ] and { }");
  expect_error("- node01\n--- ,\n", 2, 5, "`,` outside of [ ] and { }");
  expect_error("\"node01\",\n", 1, 9, "`,` outside of [ ] and { }");
  expect_error("!t,\n", 1, 3, "`,` outside of [ ] and { }");
  // A tag that begins after a closing bracket, within one word.
  expect_error("[]!t,\n", 1, 5, "`,` outside of [ ] and { }");
}

TEST(HostsErrors, MessageCarriesPositionPrefix) {
  ConfigError error = hosts_error("- hostname: a\n  gpu: []\n");
  EXPECT_EQ(std::string(error.what()).rfind("hosts.yaml:2:8: ", 0), 0u) << error.what();
}

// --- repeated slots ------------------------------------------------------------

TEST(RepeatedSlots, ASlotWithTheSameParametersAsAnEarlierOneIsNamedWithBothLines) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: node01\n"
      "  gpu: [0, 1]\n"
      "- node02\n"
      "- node02\n"
      "- hostname: node03\n"
      "  slots: 2\n"
      "- hostname: node01\n"
      "  gpu: 1\n",
      "hosts.yaml"));
  std::vector<std::string> warnings = repeated_slot_warnings(fleet, "hosts.yaml");
  ASSERT_EQ(warnings.size(), 1u) << "slots without parameters are no repeats";
  EXPECT_EQ(warnings[0].rfind("hosts.yaml:7: node01 gpu=1 is also at line 1: two jobs will run "
                              "on it at once",
                              0),
            0u)
      << warnings[0];
  EXPECT_NE(warnings[0].find("`slots: N`"), std::string::npos) << warnings[0];
  EXPECT_EQ(fleet.slots.size(), 7u) << "the repeat is a slot still";
}

TEST(RepeatedSlots, SlotsOfASlotsEntryAreNoRepeats) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: node01\n  slots: 4\n  node_type: cloud\n", "hosts.yaml"));
  EXPECT_TRUE(repeated_slot_warnings(fleet, "hosts.yaml").empty());
}

TEST(RepeatedSlots, OtherParametersMakeADifferentSlot) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: node01\n  gpu: 0\n  port: 1\n- hostname: node01\n  gpu: 0\n  port: 2\n",
      "hosts.yaml"));
  EXPECT_TRUE(repeated_slot_warnings(fleet, "hosts.yaml").empty());
}

// --- load_hosts --------------------------------------------------------------

TEST(LoadHosts, ReadsTheFile) {
  testing::TempDir dir;
  std::string path = dir.write("hosts.yaml", "- hostname: n1\n  gpu: [0, 1]\n");
  Fleet fleet = testing::value_of(load_hosts(path));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"n1 gpu=0", "n1 gpu=1"}));
}

TEST(LoadHosts, MissingFileSaysWhatToDo) {
  testing::TempDir dir;
  std::string path = dir.file("nope.yaml");
  EXPECT_EQ(std::string(load_error(path).what()),
            "hosts file not found: " + path + " (create it, or pass --hosts-file)");
}

TEST(LoadHosts, ErrorsNameTheFilePath) {
  testing::TempDir dir;
  std::string path = dir.write("h.yaml", "- node01\n- hostname: x\n  gpu: {a: 1}\n");
  ConfigError error = load_error(path);
  EXPECT_EQ(error.file(), path);
  EXPECT_EQ(error.line(), 3);
  EXPECT_EQ(std::string(error.what()).rfind(path + ":3:8: ", 0), 0u) << error.what();
}

TEST(LoadHosts, SyntaxErrorNamesFileLineAndColumn) {
  testing::TempDir dir;
  std::string path = dir.write("h.yaml", "- node01\n- hostname: \"unterminated\n");
  ConfigError error = load_error(path);
  EXPECT_EQ(error.file(), path);
  EXPECT_GT(error.line(), 0);
  EXPECT_GT(error.column(), 0);
}

TEST(LoadHosts, DirectoryIsAnError) {
  testing::TempDir dir;
  EXPECT_FALSE(load_hosts(dir.path()).ok());
}

TEST(HostsParse, GpuMonitorOnSaysTheEntrysSlotsAreExpectedToHaveGpus) {
  Fleet fleet = testing::value_of(
      parse_hosts("- hostname: a\n  gpu_monitor: on\n- hostname: b\n", "hosts.yaml"));
  ASSERT_EQ(fleet.slots.size(), 2u);
  EXPECT_TRUE(fleet.slots[0].gpu_monitor);
  EXPECT_TRUE(fleet.slots[0].gpu_monitor_asked);
  EXPECT_TRUE(fleet.slots[1].gpu_monitor);
  EXPECT_FALSE(fleet.slots[1].gpu_monitor_asked) << "the next entry did not ask";
}

TEST(HostsParse, GpuMonitorOffTurnsAnEntrysSlotsOffAndIsNoParameter) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: a\n  gpu: [0, 1]\n  gpu_monitor: off\n- hostname: b\n  gpu: [0]\n",
      "hosts.yaml"));
  ASSERT_EQ(fleet.slots.size(), 3u);
  EXPECT_FALSE(fleet.slots[0].gpu_monitor);
  EXPECT_FALSE(fleet.slots[1].gpu_monitor);
  EXPECT_TRUE(fleet.slots[2].gpu_monitor) << "the next entry is on again";
  EXPECT_FALSE(find_param(fleet.slots[0].params, "gpu_monitor"));
  EXPECT_FALSE(fleet.slots[2].gpu_monitor_asked) << "on without being asked";
  ConfigError error = hosts_error("- hostname: a\n  gpu_monitor: sometimes\n");
  EXPECT_NE(std::string(error.what()).find("`gpu_monitor` is `on` or `off`"), std::string::npos)
      << error.what();
}

}  // namespace
}  // namespace runner
