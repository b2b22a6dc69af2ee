// YAML merge keys (`<<: *defaults`) in queue and host entries, read as
// Python's yaml reads them (Pegasus files use them), and a merge key that
// names no mapping reported where it is written.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner/config/config_error.h"
#include "runner/config/hosts.h"
#include "runner/config/queue_entry.h"
#include "support/config_failure.h"
#include "support/value_of.h"

namespace runner {
namespace {

Result<QueueEntry> parsed_at(const std::string& yaml, std::size_t index) {
  YAML::Node root = YAML::Load(yaml);
  return parse_queue_entry(root[index], "queue.yaml");
}

QueueEntry entry_at(const std::string& yaml, std::size_t index) {
  return testing::value_of(parsed_at(yaml, index));
}

// Each key of the entry as `name=value,value`, in the entry's order.
std::vector<std::string> keys_of(const QueueEntry& entry) {
  std::vector<std::string> out;
  for (const EntryKey& key : entry.keys) {
    std::string text = key.name + "=";
    for (std::size_t i = 0; i < key.values.size(); ++i) text += (i ? "," : "") + key.values[i];
    out.push_back(text);
  }
  return out;
}

ConfigError entry_error(const std::string& yaml, std::size_t index) {
  return testing::failure_of(parsed_at(yaml, index));
}

const std::string k_defaults =
    "- &defaults\n"
    "  command: train <<model>> --lr <<lr>>\n"
    "  model: [a, b]\n"
    "  lr: 0.1\n"
    "  timeout: 1h\n";

TEST(MergeKeys, QueueEntryTakesTheKeysOfTheMappingItNames) {
  QueueEntry entry = entry_at(k_defaults + "- <<: *defaults\n  model: c\n", 1);
  EXPECT_EQ(keys_of(entry), (std::vector<std::string>{"command=train <<model>> --lr <<lr>>",
                                                      "model=c", "lr=0.1", "timeout=1h"}));
  ASSERT_GE(entry.keys.size(), 2u);
  EXPECT_FALSE(entry.keys[1].was_list);
  EXPECT_EQ(entry.keys[1].line, 7) << "the key written in the entry is where its value is";
  std::vector<JobSpec> jobs = expand(entry);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].command, "train <<model>> --lr <<lr>>");
  EXPECT_EQ(jobs[0].timeout_text, "1h");
}

TEST(MergeKeys, KeysOfTheEntryItselfWinWhereverTheyAreWritten) {
  QueueEntry entry = entry_at(k_defaults + "- lr: [1, 2]\n  <<: *defaults\n", 1);
  EXPECT_EQ(keys_of(entry), (std::vector<std::string>{"command=train <<model>> --lr <<lr>>",
                                                      "model=a,b", "lr=1,2", "timeout=1h"}));
  EXPECT_EQ(expand(entry).size(), 4u);
}

TEST(MergeKeys, AListOfMappingsMergesTheEarlierOneOverTheLater) {
  std::string yaml =
      "- &small {command: run <<x>> <<y>>, x: 1}\n"
      "- &large {command: other, x: 2, y: 2}\n"
      "- <<: [*small, *large]\n";
  QueueEntry entry = entry_at(yaml, 2);
  std::vector<std::string> keys = keys_of(entry);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"command=run <<x>> <<y>>", "x=1", "y=2"}));
}

TEST(MergeKeys, MergedMappingsMayMergeInTurn) {
  std::string yaml =
      "- &base {command: run <<x>>, x: 1, retries: 2}\n"
      "- &more {<<: *base, x: 2}\n"
      "- {<<: *more, retries: 0}\n";
  EXPECT_EQ(keys_of(entry_at(yaml, 2)),
            (std::vector<std::string>{"command=run <<x>>", "x=2", "retries=0"}));
}

TEST(MergeKeys, AQuotedKeyIsNoMergeKey) {
  ConfigError error = entry_error(k_defaults + "- command: x\n  '<<': *defaults\n", 1);
  EXPECT_NE(std::string(error.what()).find("`<<` is a mapping"), std::string::npos) << error.what();
}

TEST(MergeKeys, AKeyWrittenTwiceInTheEntryIsStillAnError) {
  ConfigError error = entry_error(k_defaults + "- <<: *defaults\n  lr: 1\n  lr: 2\n", 1);
  EXPECT_EQ(error.line(), 8);
  EXPECT_NE(std::string(error.what()).find("`lr` appears twice"), std::string::npos)
      << error.what();
}

TEST(MergeKeys, AMergeOfNoMappingIsReportedAtTheMergeKeyWithTheFix) {
  for (const std::string& value :
       {std::string("5"), std::string("[*defaults, 5]"), std::string("\n    - a\n    - b")}) {
    SCOPED_TRACE(value);
    ConfigError error = entry_error(k_defaults + "- command: x\n  <<: " + value + "\n", 1);
    EXPECT_EQ(error.line(), 7) << error.what();
    EXPECT_EQ(error.column(), 3) << error.what();
    EXPECT_NE(std::string(error.what()).find("`<<: *defaults`"), std::string::npos) << error.what();
  }
}

std::vector<std::string> labels(const Fleet& fleet) {
  std::vector<std::string> out;
  for (const Slot& slot : fleet.slots) out.push_back(slot.label);
  return out;
}

TEST(MergeKeys, HostEntryTakesTheKeysOfTheMappingItNames) {
  Fleet fleet =
      testing::value_of(parse_hosts("- &node\n"
                                    "  hostname: a\n"
                                    "  gpu: [0, 1]\n"
                                    "- <<: *node\n"
                                    "  hostname: b\n",
                                    "hosts.yaml"));
  EXPECT_EQ(labels(fleet), (std::vector<std::string>{"a gpu=0", "a gpu=1", "b gpu=0", "b gpu=1"}));
}

TEST(MergeKeys, HostMergeOfNoMappingIsReportedAtTheMergeKey) {
  {
    ConfigError error =
        testing::failure_of(parse_hosts("- hostname: a\n  <<: [1, 2]\n", "hosts.yaml"));
    EXPECT_EQ(error.line(), 2) << error.what();
    EXPECT_NE(std::string(error.what()).find("`<<: *defaults`"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace runner
