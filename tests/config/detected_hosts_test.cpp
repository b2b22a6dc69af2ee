#include "runner/config/detected_hosts.h"

#include <gtest/gtest.h>

#include "runner/config/hosts.h"
#include "support/value_of.h"

namespace runner {
namespace {

TEST(DetectedHosts, EachGpuIsASlotWithItsIndexAndUuid) {
  std::string text = detected_hosts_yaml(
      {{"node01", {{"0", "NVIDIA A100", "GPU-aaaa"}, {"1", "NVIDIA A100", "GPU-bbbb"}}, ""},
       {"user@node02:2222", {}, "no nvidia-smi: one slot"}});
  EXPECT_EQ(text,
            "- hostname: node01  # NVIDIA A100\n  gpu: 0\n  gpu_uuid: GPU-aaaa\n"
            "- hostname: node01  # NVIDIA A100\n  gpu: 1\n  gpu_uuid: GPU-bbbb\n"
            "- user@node02:2222  # no nvidia-smi: one slot\n");
  // What it says is what runner reads back.
  Fleet fleet = testing::value_of(parse_hosts(text, "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 2u);
  ASSERT_EQ(fleet.slots.size(), 3u);
  EXPECT_EQ(fleet.slots[1].params, (Params{{"gpu", "1"}, {"gpu_uuid", "GPU-bbbb"}}));
  EXPECT_EQ(fleet.hosts[0].slots, (std::vector<int>{0, 1}));
  EXPECT_TRUE(fleet.slots[2].params.empty());
}

TEST(DetectedHosts, NamesThatYamlWouldMisreadAreQuoted) {
  // Unquoted, YAML would read a flow sequence.
  std::string text = detected_hosts_yaml({{"[::1]:2222", {}, ""}});
  Fleet fleet = testing::value_of(parse_hosts(text, "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 1u);
  EXPECT_EQ(fleet.hosts[0].name, "[::1]:2222");
}

TEST(DetectedHosts, WhatAHostSaidIsWrittenSoThatItReadsBackAsItWas) {
  // A model name with line breaks would end its comment and add an entry.
  std::string text = detected_hosts_yaml(
      {{"node01",
        {{"0", "A100\r- evil.example.org\n- hostname: node01  #\u2028- x\x1b[2K", "GPU-aa"},
         {"1\r- x", "A100", "GPU-b\nb: c"}},
        ""},
       {"node02", {}, "nvidia-smi -L failed (exit 9: no\rpe\n- evil.example.org)"}});
  EXPECT_EQ(text.find_first_of("\r\x1b"), std::string::npos) << text;
  EXPECT_EQ(text.find("\u2028"), std::string::npos) << text;
  EXPECT_NE(text.find("# A100\\r- evil.example.org\\n- hostname: node01  #\\u2028- x\\x1b[2K\n"),
            std::string::npos)
      << text;
  Fleet fleet = testing::value_of(parse_hosts(text, "hosts.yaml"));
  ASSERT_EQ(fleet.hosts.size(), 2u) << text;
  EXPECT_EQ(fleet.hosts[0].name, "node01");
  EXPECT_EQ(fleet.hosts[1].name, "node02");
  ASSERT_EQ(fleet.slots.size(), 3u) << text;
  EXPECT_EQ(fleet.slots[0].params, (Params{{"gpu", "0"}, {"gpu_uuid", "GPU-aa"}}));
  EXPECT_EQ(fleet.slots[1].params, (Params{{"gpu", "1\r- x"}, {"gpu_uuid", "GPU-b\nb: c"}}));
}

}  // namespace
}  // namespace runner
