// Tests for queue.yaml entries: parsing, expansion order, the remainder after
// the first job, canonical entries and writing entries back as YAML.
#include "runner/config/queue_entry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner/config/config_error.h"
#include "support/config_failure.h"
#include "support/job_text.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::describe;

Result<QueueEntry> parsed(const std::string& yaml) {
  YAML::Node root = YAML::Load(yaml);
  return parse_queue_entry(root[0], "queue.yaml");
}

QueueEntry entry_from(const std::string& yaml) { return testing::value_of(parsed(yaml)); }

std::vector<std::string> key_names(const QueueEntry& entry) {
  std::vector<std::string> names;
  for (const auto& key : entry.keys) names.push_back(key.name);
  return names;
}

void expect_same_entry(const QueueEntry& a, const QueueEntry& b) {
  EXPECT_EQ(a.plain, b.plain);
  ASSERT_EQ(a.keys.size(), b.keys.size());
  for (std::size_t i = 0; i < a.keys.size(); ++i) {
    EXPECT_EQ(a.keys[i].name, b.keys[i].name);
    EXPECT_EQ(a.keys[i].values, b.keys[i].values);
    EXPECT_EQ(a.keys[i].was_list, b.keys[i].was_list) << a.keys[i].name;
  }
}

// Writes the entry out and parses it back.
QueueEntry round_trip(const QueueEntry& entry, int indent = 0) {
  std::string text = entry_to_yaml(entry, indent);
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    ADD_FAILURE() << "does not parse: " << error.what() << "\n" << text;
    return {};
  }
  if (!root.IsSequence() || root.size() != 1) {
    ADD_FAILURE() << "not a one-item list:\n" << text;
    return {};
  }
  return testing::value_of(parse_queue_entry(root[0], "queue.yaml"));
}

ConfigError error_for(const std::string& yaml) { return testing::failure_of(parsed(yaml)); }

// Drains a queue of entries job by job, the way the queue file does.
std::vector<JobSpec> drain(std::vector<QueueEntry> queue) {
  std::vector<JobSpec> jobs;
  while (!queue.empty()) {
    jobs.push_back(first_job(queue.front()));
    std::vector<QueueEntry> rest = remainder_after_first(queue.front());
    EXPECT_LE(rest.size(), queue.front().keys.size());
    for (const auto& part : rest) expect_same_entry(round_trip(part), part);
    queue.erase(queue.begin());
    queue.insert(queue.begin(), rest.begin(), rest.end());
  }
  return jobs;
}

TEST(QueueEntryTest, PlainStringIsOneCommand) {
  QueueEntry entry = entry_from("- nvidia-smi\n");
  EXPECT_TRUE(entry.plain);
  ASSERT_EQ(key_names(entry), std::vector<std::string>{"command"});
  EXPECT_EQ(entry.keys[0].values, std::vector<std::string>{"nvidia-smi"});
  EXPECT_EQ(entry.line, 1);
  EXPECT_EQ(entry.column, 3);
  EXPECT_EQ(job_count(entry), 1u);
  EXPECT_EQ(describe(expand(entry)), std::vector<std::string>{"nvidia-smi"});
}

TEST(QueueEntryTest, SpecExampleExpandsCommandSlowestLastKeyFastest) {
  QueueEntry entry = entry_from(
      "- command: docker exec leaderboard<<gpu>> python bench.py --model <<model>>\n"
      "  model: [llama-7B, vicuna-13B]\n"
      "  batch: [1, 2, 4]\n");
  EXPECT_FALSE(entry.plain);
  EXPECT_EQ(job_count(entry), 6u);
  std::string c = "docker exec leaderboard<<gpu>> python bench.py --model <<model>>";
  EXPECT_EQ(
      describe(expand(entry)),
      (std::vector<std::string>{c + " model=llama-7B batch=1", c + " model=llama-7B batch=2",
                                c + " model=llama-7B batch=4", c + " model=vicuna-13B batch=1",
                                c + " model=vicuna-13B batch=2", c + " model=vicuna-13B batch=4"}));
}

TEST(QueueEntryTest, CommandVariesSlowestEvenWhenWrittenLast) {
  QueueEntry entry = entry_from(
      "- model: [a, b]\n"
      "  command: [x, y]\n"
      "  batch: [1, 2]\n");
  EXPECT_EQ(describe(expand(entry)),
            (std::vector<std::string>{"x model=a batch=1", "x model=a batch=2", "x model=b batch=1",
                                      "x model=b batch=2", "y model=a batch=1", "y model=a batch=2",
                                      "y model=b batch=1", "y model=b batch=2"}));
  EXPECT_EQ(describe(first_job(entry)), "x model=a batch=1");
}

TEST(QueueEntryTest, KeysRememberListsAndLines) {
  QueueEntry entry = entry_from(
      "- command: run\n"
      "  model: [a]\n"
      "  batch: 4\n");
  ASSERT_EQ(entry.keys.size(), 3u);
  EXPECT_FALSE(entry.keys[0].was_list);
  EXPECT_TRUE(entry.keys[1].was_list);
  EXPECT_FALSE(entry.keys[2].was_list);
  EXPECT_EQ(entry.keys[1].line, 2);
  EXPECT_EQ(entry.keys[2].line, 3);
}

TEST(QueueEntryTest, SlotsIsReservedAndGivesJobSlots) {
  EXPECT_TRUE(is_reserved_job_key("command"));
  EXPECT_TRUE(is_reserved_job_key("slots"));
  EXPECT_FALSE(is_reserved_job_key("model"));
  QueueEntry entry = entry_from("- command: train\n  slots: 4\n  model: m\n");
  JobSpec job = first_job(entry);
  EXPECT_EQ(job.slots, 4);
  EXPECT_EQ(job.params, (Params{{"model", "m"}}));
}

TEST(QueueEntryTest, SlotsListIsADimensionInFileOrder) {
  QueueEntry entry = entry_from("- command: bench\n  slots: [1, 2]\n  model: [a, b]\n");
  EXPECT_EQ(describe(expand(entry)),
            (std::vector<std::string>{"bench model=a", "bench model=b", "bench model=a slots=2",
                                      "bench model=b slots=2"}));
}

TEST(QueueEntryTest, BadSlotsAreReportedAtTheirValue) {
  for (const std::string value : {"0", "-1", "1.5", "two", "\"\"", "[1, 0]", "[2, x]"}) {
    ConfigError error = error_for("- command: run\n  slots: " + value + "\n");
    EXPECT_EQ(error.line(), 2) << value;
    EXPECT_GE(error.column(), 10) << value;
    EXPECT_NE(error.detail().find("slots"), std::string::npos) << value;
  }
  ConfigError error = error_for("- command: run\n  slots: [1, 0]\n");
  EXPECT_EQ(error.column(), 14);
  EXPECT_EQ(error.file(), "queue.yaml");
}

TEST(QueueEntryTest, InvalidEntriesAreConfigErrorsWithPosition) {
  struct Case {
    std::string yaml;
    int line;
    std::string words;
  };
  std::vector<Case> cases = {
      {"- model: [a, b]\n", 1, "command"},
      {"- command: run\n  model:\n    nested: 1\n", 3, "mapping"},
      {"- command: run\n  model:\n", 2, "no value"},
      {"- command: run\n  model: []\n", 2, "empty list"},
      {"- command: run\n  model: [[a]]\n", 2, "nested list"},
      {"- command: run\n  model: [a, ~]\n", 2, "no value"},
      {"- command: [run, ~]\n", 1, "no value"},
      {"- command: run\n  model: a\n  model: b\n", 3, "twice"},
      {"- [a, b]\n", 1, "not a list"},
      {"- ~\n", 1, "empty"},
      {"- command: run\n  [k]: v\n", 2, "key"},
  };
  for (const auto& c : cases) {
    ConfigError error = error_for(c.yaml);
    EXPECT_EQ(error.line(), c.line) << c.yaml;
    EXPECT_GT(error.column(), 0) << c.yaml;
    EXPECT_NE(error.detail().find(c.words), std::string::npos) << c.yaml << error.what();
  }
}

TEST(QueueEntryTest, RemainderHoldsTheRestInAtMostKEntries) {
  QueueEntry entry = entry_from(
      "- command: [c1, c2]\n"
      "  model: [m1, m2, m3]\n"
      "  batch: [1, 2, 4]\n");
  std::vector<QueueEntry> rest = remainder_after_first(entry);
  ASSERT_EQ(rest.size(), 3u);
  // The first holds the rest of the fastest key, the last the rest of the slowest.
  ASSERT_GE(rest[0].keys.size(), 3u);
  EXPECT_EQ(rest[0].keys[2].values, (std::vector<std::string>{"2", "4"}));
  ASSERT_GE(rest[1].keys.size(), 2u);
  EXPECT_EQ(rest[1].keys[1].values, (std::vector<std::string>{"m2", "m3"}));
  ASSERT_GE(rest[2].keys.size(), 1u);
  EXPECT_EQ(rest[2].keys[0].values, (std::vector<std::string>{"c2"}));
  std::vector<JobSpec> all = expand(entry);
  std::vector<JobSpec> expected(all.begin() + 1, all.end());
  std::vector<JobSpec> got;
  for (const auto& part : rest)
    for (auto& job : expand(part)) got.push_back(job);
  EXPECT_EQ(describe(got), describe(expected));
}

TEST(QueueEntryTest, RemainderKeepsFileKeyOrderAndWritesAListAsAListThoughOneValueIsLeft) {
  // Pegasus reads only lists: a Pegasus file stays one.
  QueueEntry entry = entry_from(
      "- model: [a, b]\n"
      "  command: [x, y]\n"
      "  batch: [1, 2]\n");
  std::vector<QueueEntry> rest = remainder_after_first(entry);
  ASSERT_EQ(rest.size(), 3u);
  for (const auto& part : rest) {
    EXPECT_EQ(key_names(part), (std::vector<std::string>{"model", "command", "batch"}));
    for (const auto& key : part.keys) EXPECT_TRUE(key.was_list);
  }
  EXPECT_EQ(entry_to_yaml(rest[0]), "- model: [a]\n  command: [x]\n  batch: [2]\n");
  EXPECT_EQ(entry_to_yaml(rest[1]), "- model: [b]\n  command: [x]\n  batch: [1, 2]\n");
  EXPECT_EQ(entry_to_yaml(rest[2]), "- model: [a, b]\n  command: [y]\n  batch: [1, 2]\n");
}

TEST(QueueEntryTest, ARemainderKeyWrittenAsAScalarStaysAScalar) {
  QueueEntry entry = entry_from("- command: run\n  model: [a, b]\n  batch: 8\n  seed: [1, 2]\n");
  std::vector<QueueEntry> rest = remainder_after_first(entry);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(entry_to_yaml(rest[0]), "- command: run\n  model: [a]\n  batch: 8\n  seed: [2]\n");
}

TEST(QueueEntryTest, RemainderSkipsKeysWithOneValue) {
  QueueEntry entry = entry_from("- command: run\n  model: [a, b, c]\n  batch: 8\n");
  std::vector<QueueEntry> rest = remainder_after_first(entry);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(entry_to_yaml(rest[0]), "- command: run\n  model: [b, c]\n  batch: 8\n");
}

TEST(QueueEntryTest, OneJobEntriesLeaveNothing) {
  EXPECT_TRUE(remainder_after_first(entry_from("- echo hi\n")).empty());
  EXPECT_TRUE(remainder_after_first(entry_from("- command: run\n  model: [a]\n")).empty());
}

TEST(QueueEntryTest, DrainingJobByJobGivesExpandOrder) {
  std::vector<std::string> shapes = {
      "- echo hi\n",
      "- command: [a, b, c]\n",
      "- command: run\n  model: [a, b]\n  batch: [1, 2, 4]\n  seed: [7, 8]\n",
      "- seed: [1, 2]\n  command: [p, q]\n  slots: [1, 2]\n",
      "- command: run\n  x: [1, 2, 3, 4]\n  y: only\n  z: [u, v]\n",
      "- command: [\"a: b\", 'c # d', \"-e\"]\n  v: ['{x}', \"[y]\", '*z']\n",
  };
  for (const auto& shape : shapes) {
    QueueEntry entry = entry_from(shape);
    EXPECT_EQ(describe(drain({entry})), describe(expand(entry))) << shape;
  }
}

TEST(QueueEntryTest, CanonicalEntryParsesBackToTheSameJob) {
  QueueEntry entry = entry_from(
      "- command: python x.py --model <<model>> --note '<<note>>'\n"
      "  model: [a/b, \"c: d\"]\n"
      "  note: ['#1', \"two\\nlines\"]\n"
      "  slots: [1, 2]\n");
  for (const auto& job : expand(entry)) {
    QueueEntry canonical = canonical_entry(job);
    EXPECT_EQ(canonical.keys.front().name, "command");
    for (const auto& key : canonical.keys) EXPECT_EQ(key.values.size(), 1u);
    bool has_slots = key_names(canonical).back() == "slots";
    EXPECT_EQ(has_slots, job.slots != 1);
    std::vector<JobSpec> back = expand(round_trip(canonical));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(describe(back[0]), describe(job));
  }
}

TEST(QueueEntryTest, PlainEntryStaysPlain) {
  QueueEntry entry = entry_from("- echo hi\n");
  EXPECT_EQ(entry_to_yaml(entry), "- echo hi\n");
  EXPECT_EQ(entry_to_yaml(entry, 4), "    - echo hi\n");
  expect_same_entry(round_trip(entry, 2), entry);
}

TEST(QueueEntryTest, WritesTheUsualCompactShape) {
  QueueEntry entry = entry_from(
      "- command: docker exec c<<gpu>> python x.py --model <<model>>\n"
      "  model: [a, b]\n");
  EXPECT_EQ(entry_to_yaml(entry),
            "- command: docker exec c<<gpu>> python x.py --model <<model>>\n"
            "  model: [a, b]\n");
}

TEST(QueueEntryTest, ScalarsThatNeedQuotesRoundTrip) {
  std::vector<std::string> values = {
      "a: b",     "x # y", "x#y",  "-x",  "- x",   "{a}",      "[a]",     "null",
      "~",        "Null",  "true", "",    " lead", "trail ",   "it's",    "say \"hi\"",
      "1",        "0x1",   "@x",   "`x`", "%x",    "!x",       "&x",      "*x",
      "|x",       ">x",    "a, b", "a,b", "?x",    "? x",      "é ü",     "a\tb",
      "back\\sl", "---",   "...",  "a]",  "<<",    "a'b",      "$HOME",   "'quoted'",
      "\"dq\"",   "x: ",   ": x",  "#x",  "a\rb",  "ctrl\x01", "{{ m }}", "<<model>>",
      "a:b",      "- ",    "-",    ",",   "=",     "a # b: c", "k: [v]",  "&&",
  };
  for (const auto& value : values) {
    QueueEntry plain{{EntryKey{"command", {value}, false, 0}}, true};
    expect_same_entry(round_trip(plain), plain);
    QueueEntry mapping{{EntryKey{"command", {"run " + value}, false, 0},
                        EntryKey{value.empty() ? "k" : value, {value}, false, 0},
                        EntryKey{"list", {value, "plain", value}, true, 0}}};
    expect_same_entry(round_trip(mapping), mapping);
    expect_same_entry(round_trip(mapping, 6), mapping);
  }
}

TEST(QueueEntryTest, MultiLineStringsUseLiteralBlocks) {
  QueueEntry entry{{EntryKey{"command", {"line one\n  line two\n"}, false, 0},
                    EntryKey{"model", {"m"}, false, 0}}};
  EXPECT_EQ(entry_to_yaml(entry), "- command: |\n    line one\n      line two\n  model: m\n");
  entry.keys[0].values[0] = "line one\nline two";
  EXPECT_EQ(entry_to_yaml(entry), "- command: |-\n    line one\n    line two\n  model: m\n");
  QueueEntry plain{{EntryKey{"command", {"a\n\nb\n"}, false, 0}}, true};
  EXPECT_EQ(entry_to_yaml(plain, 2), "  - |\n    a\n\n    b\n");
}

TEST(QueueEntryTest, AwkwardMultiLineStringsRoundTrip) {
  std::vector<std::string> values = {
      "a\nb",
      "a\nb\n",
      "a\nb\n\n",
      "a\nb\n\n\n",
      "\na",
      "\n\na\n",
      "\n",
      "\n\n",
      " lead\nx",
      "a\n  \nb",
      "a\n# not a comment\n",
      "a\n- b\n",
      "a\n---\n...\n",
      "tab\n\tx\n",
      "trail \nx  \n",
      "a\r\nb\r\n",
      "x: y\nz: w\n",
      "é\n ü\n",
  };
  for (const auto& value : values) {
    QueueEntry plain{{EntryKey{"command", {value}, false, 0}}, true};
    expect_same_entry(round_trip(plain), plain);
    expect_same_entry(round_trip(plain, 3), plain);
    QueueEntry mapping{{EntryKey{"command", {value, "second\nline\n"}, true, 0},
                        EntryKey{"note", {value}, false, 0}}};
    expect_same_entry(round_trip(mapping), mapping);
    expect_same_entry(round_trip(mapping, 4), mapping);
  }
}

TEST(QueueEntryTest, ParsesPegasusBlockListStyle) {
  QueueEntry entry = entry_from(
      "- command:\n"
      "    - |\n"
      "      CUDA_VISIBLE_DEVICES={{slots}} \\\n"
      "      torchrun train.py --model {{model}}\n"
      "  slots:\n"
      "    - 8\n"
      "  model:\n"
      "    - qwen3-8b\n"
      "    - llama-7b\n");
  std::vector<JobSpec> jobs = expand(entry);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].command,
            "CUDA_VISIBLE_DEVICES={{slots}} \\\ntorchrun train.py --model {{model}}\n");
  EXPECT_EQ(jobs[0].slots, 8);
  std::vector<QueueEntry> rest = remainder_after_first(entry);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(entry_to_yaml(rest[0]),
            "- command:\n"
            "    - |\n"
            "      CUDA_VISIBLE_DEVICES={{slots}} \\\n"
            "      torchrun train.py --model {{model}}\n"
            "  slots: [8]\n"
            "  model: [llama-7b]\n");
}

TEST(QueueEntryTest, LongListRemainderIsOneEntryOfOneLine) {
  QueueEntry entry{{EntryKey{"command", {"run <<i>>"}, false, 0}, EntryKey{"i", {}, true, 0}}};
  for (int i = 0; i < 10000; ++i) entry.keys[1].values.push_back(std::to_string(i));
  std::vector<QueueEntry> rest = remainder_after_first(entry);
  ASSERT_EQ(rest.size(), 1u);
  ASSERT_GE(rest[0].keys.size(), 2u);
  EXPECT_EQ(rest[0].keys[1].values.size(), 9999u);
  std::string text = entry_to_yaml(rest[0]);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_LT(text.size(), 70000u);
  QueueEntry back = round_trip(rest[0]);
  ASSERT_GE(back.keys.size(), 2u);
  EXPECT_EQ(back.keys[1].values.front(), "1");
  EXPECT_EQ(back.keys[1].values.back(), "9999");
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST(QueueEntryReservedKeys, TimeoutRetriesAndCancelAreJobSettingsNotParameters) {
  QueueEntry entry = entry_from(
      "- command: python bench.py --m <<m>>\n"
      "  m: [a, b]\n"
      "  timeout: 1h30m\n"
      "  retries: 2\n"
      "  cancel: docker exec c<<gpu>> pkill -f bench.py\n");
  std::vector<JobSpec> jobs = expand(entry);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].params, (Params{{"m", "a"}}));
  EXPECT_EQ(jobs[0].timeout, std::chrono::milliseconds(5'400'000));
  EXPECT_EQ(jobs[0].retries, 2);
  EXPECT_EQ(jobs[0].cancel, "docker exec c<<gpu>> pkill -f bench.py");

  // consumed.yaml keeps them, as written, and they parse back the same.
  QueueEntry canonical = canonical_entry(jobs[1]);
  std::string yaml = entry_to_yaml(canonical);
  EXPECT_NE(yaml.find("timeout: 1h30m"), std::string::npos) << yaml;
  JobSpec again = first_job(entry_from(yaml));
  EXPECT_EQ(again.timeout, jobs[1].timeout);
  EXPECT_EQ(again.retries, 2);
  EXPECT_EQ(again.cancel, jobs[1].cancel);
  EXPECT_EQ(again.params, jobs[1].params);
}

TEST(QueueEntryReservedKeys, AllocationPolicyIsAJobSettingThatConsumedYamlKeeps) {
  QueueEntry entry =
      entry_from("- command: train <<m>>\n  slots: 2\n  allocation_policy: buddy\n  m: [a, b]\n");
  std::vector<JobSpec> jobs = expand(entry);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].allocation, Allocation::buddy);
  EXPECT_EQ(jobs[0].params, (Params{{"m", "a"}}));
  EXPECT_EQ(first_job(entry_from("- command: x\n  slots: 2\n")).allocation, Allocation::first_fit);
  std::string yaml = entry_to_yaml(canonical_entry(jobs[1]));
  EXPECT_NE(yaml.find("allocation_policy: buddy"), std::string::npos) << yaml;
  EXPECT_EQ(first_job(entry_from(yaml)).allocation, Allocation::buddy);
}

TEST(QueueEntryReservedKeys, BadValuesAreReportedWhereTheyAre) {
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"- command: x\n  timeout: soon\n", "timeout"},
           {"- command: x\n  timeout: [1m, -2s]\n", "timeout"},
           {"- command: x\n  retries: -1\n", "retries"},
           {"- command: x\n  retries: many\n", "retries"},
           {"- command: x\n  allocation_policy: best\n", "first_fit or buddy"},
           {"- command: x\n  allocation_policy: buddy\n  slots: [2, 3]\n", "power of two"}}) {
    {
      ConfigError error = testing::failure_of(parsed(text));
      EXPECT_EQ(error.line(), 2) << text;
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  }
}

TEST(QueueEntryReservedKeys, DefaultsAreUnset) {
  JobSpec job = first_job(entry_from("- echo hi\n"));
  EXPECT_FALSE(job.timeout);
  EXPECT_FALSE(job.retries);
  EXPECT_TRUE(job.cancel.empty());
  EXPECT_TRUE(is_reserved_job_key("timeout"));
  EXPECT_TRUE(is_reserved_job_key("retries"));
  EXPECT_TRUE(is_reserved_job_key("cancel"));
  EXPECT_TRUE(is_reserved_job_key("allocation_policy"));
  EXPECT_FALSE(is_reserved_job_key("model"));
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST(QueueEntryTest, NodesIsReservedAndGivesAJobThatSpansHosts) {
  EXPECT_TRUE(is_reserved_job_key("nodes"));
  JobSpec job = first_job(entry_from("- command: train\n  nodes: 4\n  slots: 8\n"));
  EXPECT_EQ(job.nodes, 4);
  EXPECT_EQ(job.slots, 8);
  EXPECT_TRUE(job.params.empty());
  EXPECT_EQ(first_job(entry_from("- command: train\n")).nodes, std::nullopt);
  QueueEntry canonical = canonical_entry(job);
  expect_same_entry(round_trip(canonical), canonical);
  EXPECT_EQ(first_job(round_trip(canonical)).nodes, 4);
}

TEST(QueueEntryTest, NodesMustBeAPositiveCount) {
  ConfigError error = error_for("- command: train\n  nodes: 0\n");
  EXPECT_EQ(error.line(), 2);
  EXPECT_NE(error.detail().find("`nodes` must be a positive integer"), std::string::npos)
      << error.what();
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST(QueueEntryTest, OutputsAreOneValueOfShellWordsAndCleanupIsABoolean) {
  JobSpec job = first_job(entry_from(
      "- command: train\n  outputs: results/<<m>>.json logs/*.txt\n  outputs_cleanup: true\n"
      "  m: a\n"));
  EXPECT_EQ(job.outputs, "results/<<m>>.json logs/*.txt");
  EXPECT_TRUE(job.outputs_cleanup);
  EXPECT_EQ(job.params, (Params{{"m", "a"}}));
  EXPECT_EQ(first_job(round_trip(canonical_entry(job))).outputs, job.outputs);
  ConfigError error = error_for("- command: train\n  outputs_cleanup: yes please\n");
  EXPECT_NE(error.detail().find("`outputs_cleanup` is true or false"), std::string::npos);
}

TEST(QueueEntryTest, OutputsThatLeaveTheLoginDirectoryAreRefusedAtTheirLine) {
  for (std::string words : {"../shared/r.csv", "a.csv sub/../../x", "'../q.csv'", "/home/u/../v/x",
                            "..", "x/\"../y\""}) {
    ConfigError error = error_for("- command: train\n  outputs: " + words + "\n");
    EXPECT_EQ(error.line(), 2) << words;
    EXPECT_NE(error.detail().find("leaves the login directory"), std::string::npos) << words;
  }
  for (std::string words : {"...", "a..b/c", "..x/y", "/abs/path.csv", "<<up>>/r.csv", "./r.csv"})
    EXPECT_EQ(first_job(entry_from("- command: train\n  outputs: " + words + "\n  up: x\n")).outputs,
              words);
}

TEST(QueueEntryTest, EveryHostIsAKeyOfItsOwnAndNotWithNodes) {
  JobSpec job = first_job(entry_from("- command: nvidia-smi\n  every: host\n"));
  EXPECT_TRUE(job.every_host);
  EXPECT_TRUE(job.params.empty());
  EXPECT_TRUE(first_job(round_trip(canonical_entry(job))).every_host);
  EXPECT_FALSE(first_job(entry_from("- command: x\n")).every_host);
  ConfigError error = error_for("- command: x\n  every: slot\n");
  EXPECT_EQ(error.line(), 2);
  EXPECT_NE(error.detail().find("`every: host` runs the job once on each host"),
            std::string::npos)
      << error.detail();
  error = error_for("- command: x\n  nodes: 2\n  every: host\n");
  EXPECT_EQ(error.line(), 3);
  EXPECT_NE(error.detail().find("remove one of them"), std::string::npos) << error.detail();
}

}  // namespace
}  // namespace runner
