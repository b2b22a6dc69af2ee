// Tests for the queue file on disk: taking jobs under the lock, recording
// them in consumed.yaml, never writing a file that does not parse, edits
// made during a take, and appends from several processes at once.
#include "runner/queue/queue_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runner/config/config_error.h"
#include "runner/queue/queue_document.h"
#include "runner/queue/queue_watcher.h"
#include "support/config_failure.h"
#include "support/job_text.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::describe;

std::vector<std::string> jobs_in(const std::string& text) {
  std::vector<std::string> jobs;
  for (const auto& span : testing::value_of(parse_queue_document(text, "test")).entries)
    for (const auto& job : expand(span.entry)) jobs.push_back(describe(job));
  return jobs;
}

bool always(const JobSpec&) { return true; }

// Runs `body` in a child process; its exit status is 0 when it returns true.
pid_t spawn(const std::function<bool()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  return pid;
}

int exit_status(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

using testing::LiveProcess;

const std::string k_queue =
    "# campaign\n"
    "- command: bench <<model>> <<batch>> <<seed>>\n"
    "  model: [llama, vicuna]   # models\n"
    "  batch: [1, 2, 4]\n"
    "  seed: [7, 8]\n"
    "\n"
    "# afterwards\n"
    "- echo done\n";

TEST(QueueFileTest, MissingQueueIsEmpty) {
  testing::TempDir dir;
  QueueFile queue(dir.file("queue.yaml"));
  EXPECT_TRUE(std::holds_alternative<QueueEmpty>(queue.take_first(always)));
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueFileTest, DrainsAProductOneJobAtATimeAndRecordsEachInConsumed) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", k_queue));
  EXPECT_EQ(queue.consumed_path(), dir.file("consumed.yaml"));
  std::vector<std::string> taken;
  std::vector<JobSpec> taken_jobs;
  while (true) {
    TakeResult result = queue.take_first(always);
    if (std::holds_alternative<QueueEmpty>(result)) break;
    ASSERT_TRUE(std::holds_alternative<Taken>(result));
    taken.push_back(describe(std::get<Taken>(result).job));
    taken_jobs.push_back(std::get<Taken>(result).job);
    // The comment about the last entry stays while the product drains.
    if (taken.size() < 13) {
      EXPECT_NE(dir.read("queue.yaml").find("\n\n# afterwards\n- echo done\n"), std::string::npos);
    }
    ASSERT_LE(taken.size(), 13u);
  }
  EXPECT_EQ(taken, jobs_in(k_queue));
  EXPECT_EQ(taken.size(), 13u);
  // Drained, the queue is an empty list, which Pegasus can read.
  EXPECT_EQ(dir.read("queue.yaml"), "# campaign\n\n# afterwards\n[]\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
  // consumed.yaml holds one canonical entry per job, in order.
  QueueDocument consumed =
      testing::value_of(parse_queue_document(dir.read("consumed.yaml"), "consumed.yaml"));
  ASSERT_EQ(consumed.entries.size(), taken.size());
  for (std::size_t i = 0; i < taken.size(); ++i) {
    std::vector<JobSpec> back = expand(consumed.entries[i].entry);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(describe(back[0]), taken[i]);
    // In Pegasus' form: a command alone as a string, else every value a list.
    const QueueEntry& entry = consumed.entries[i].entry;
    EXPECT_EQ(entry.plain, entry.keys.size() == 1) << taken[i];
    if (!entry.plain) {
      for (const auto& key : entry.keys) EXPECT_TRUE(key.was_list) << taken[i] << " " << key.name;
    }
  }
  EXPECT_EQ(jobs_in(dir.read("consumed.yaml")), taken);
}

TEST(QueueFileTest, ConsumedEntriesCarrySlotsAndPasteBack) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- command: train <<m>>\n  slots: [2, 1]\n  m: a\n"));
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_EQ(dir.read("consumed.yaml"),
            "- command: [train <<m>>]\n  m: [a]\n  slots: 2\n"
            "- command: [train <<m>>]\n  m: [a]\n");
}

TEST(QueueFileTest, ConsumedYamlMovedRemovedOrAppendedToBetweenTakesKeepsEveryJob) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- a\n- b\n- c\n- d\n"));
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  std::filesystem::rename(dir.file("consumed.yaml"), dir.file("consumed.old"));
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_EQ(dir.read("consumed.old"), "- a\n");
  EXPECT_EQ(dir.read("consumed.yaml"), "- b\n");
  std::filesystem::remove(dir.file("consumed.yaml"));
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_EQ(dir.read("consumed.yaml"), "- c\n");
  dir.write("consumed.yaml", dir.read("consumed.yaml") + "# a note, no newline");
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_EQ(dir.read("consumed.yaml"), "- c\n# a note, no newline\n- d\n");
}

TEST(QueueFileTest, JobsAppendedAfterTheEmptyListOfADrainedQueueAreTaken) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "# mine\r\n- a\r\n"));
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_EQ(dir.read("queue.yaml"), "# mine\r\n[]\r\n");
  // As `echo "- b" >> queue.yaml` leaves it.
  dir.write("queue.yaml", "# mine\r\n[]\r\n- b\n- c\n");
  EXPECT_EQ(testing::value_of(queue.read_entries()).size(), 2u);
  TakeResult b = queue.take_first(always);
  ASSERT_TRUE(std::holds_alternative<Taken>(b));
  EXPECT_EQ(std::get<Taken>(b).job.command, "b");
  EXPECT_EQ(std::get<Taken>(b).job.line, 3);
  EXPECT_EQ(dir.read("queue.yaml"), "# mine\r\n[]\r\n- c\n");
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_EQ(dir.read("queue.yaml"), "# mine\r\n[]\r\n");
  EXPECT_TRUE(std::holds_alternative<QueueEmpty>(queue.take_first(always)));
}

TEST(QueueFileTest, HeadThatCannotBePlacedStaysInTheQueue) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- command: big\n  slots: 8\n- small\n"));
  int asked = 0;
  TakeResult result = queue.take_first([&](const JobSpec& job) {
    ++asked;
    EXPECT_EQ(job.slots, 8);
    return false;
  });
  ASSERT_TRUE(std::holds_alternative<HeadNotPlaceable>(result));
  EXPECT_EQ(std::get<HeadNotPlaceable>(result).job.command, "big");
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(dir.read("queue.yaml"), "- command: big\n  slots: 8\n- small\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("consumed.yaml")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueFileTest, QueueThatDoesNotParseIsLeftAloneAndReportedWithPosition) {
  testing::TempDir dir;
  std::string broken = "- a\n- command: [b,\n  m: x\n";
  QueueFile queue(dir.write("queue.yaml", broken));
  TakeResult result = queue.take_first(always);
  ASSERT_TRUE(std::holds_alternative<QueueUnavailable>(result));
  const QueueUnavailable& unavailable = std::get<QueueUnavailable>(result);
  EXPECT_TRUE(unavailable.parse_error);
  EXPECT_EQ(unavailable.reason.rfind(dir.file("queue.yaml") + ":", 0), 0u) << unavailable.reason;
  EXPECT_EQ(dir.read("queue.yaml"), broken);
  EXPECT_FALSE(std::filesystem::exists(dir.file("consumed.yaml")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));

  dir.write("queue.yaml", "- a\n- model: [x]\n");
  result = queue.take_first(always);
  ASSERT_TRUE(std::holds_alternative<QueueUnavailable>(result));
  EXPECT_EQ(std::get<QueueUnavailable>(result).reason.rfind(dir.file("queue.yaml") + ":2:3:", 0),
            0u)
      << std::get<QueueUnavailable>(result).reason;
  EXPECT_EQ(dir.read("queue.yaml"), "- a\n- model: [x]\n");
}

TEST(QueueFileTest, LockedQueueIsUnavailable) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- a\n"));
  LiveProcess other;
  dir.write("queue.yaml.lock", std::to_string(other.pid()) + "\n");
  TakeResult result = queue.take_first(always);
  ASSERT_TRUE(std::holds_alternative<QueueUnavailable>(result));
  EXPECT_EQ(std::get<QueueUnavailable>(result).reason,
            "locked by pid " + std::to_string(other.pid()));
  EXPECT_FALSE(std::get<QueueUnavailable>(result).parse_error);
  EXPECT_EQ(dir.read("queue.yaml"), "- a\n");
}

TEST(QueueFileTest, StaleLockIsBrokenWithAWarningAndTheJobTaken) {
  testing::TempDir dir;
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  dir.write("queue.yaml.lock", std::to_string(dead) + "\n");
  std::vector<std::string> warnings;
  QueueFile queue(dir.write("queue.yaml", "- a\n"),
                  [&](const std::string& message) { warnings.push_back(message); });
  EXPECT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("pid " + std::to_string(dead)), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueFileTest, KeepsPermissionsAndSymlinks) {
  testing::TempDir dir;
  std::string real = dir.write("real.yaml", "- a\n- b\n");
  ASSERT_EQ(::chmod(real.c_str(), 0640), 0);
  std::filesystem::create_symlink(real, dir.file("queue.yaml"));
  QueueFile queue(dir.file("queue.yaml"));
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("queue.yaml")));
  EXPECT_EQ(dir.read("real.yaml"), "- b\n");
  struct stat info {};
  ASSERT_EQ(::stat(real.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  // Nothing but the files we made is left in the directory.
  std::set<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(dir.path()))
    names.insert(item.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"real.yaml", "queue.yaml", "consumed.yaml"}));
}

TEST(QueueFileTest, AnEditDuringATakeIsKeptAndNothingIsTaken) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- old-first\n- second\n"));
  std::vector<std::string> asked;
  TakeBatch batch = queue.take_while([&](const JobSpec& job) {
    asked.push_back(job.command);
    // An editor saving its buffer without the lock, between read and write.
    if (asked.size() == 1) dir.write("queue.yaml", "- new-first\n- old-first\n- second\n");
    return asked.size() == 1;
  });
  EXPECT_TRUE(batch.taken.empty());
  ASSERT_TRUE(std::holds_alternative<QueueUnavailable>(batch.stopped));
  EXPECT_FALSE(std::get<QueueUnavailable>(batch.stopped).parse_error);
  EXPECT_EQ(dir.read("queue.yaml"), "- new-first\n- old-first\n- second\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("consumed.yaml")));

  // The next look takes from the edited file.
  TakeResult result = queue.take_first(always);
  ASSERT_TRUE(std::holds_alternative<Taken>(result));
  EXPECT_EQ(std::get<Taken>(result).job.command, "new-first");
  EXPECT_EQ(dir.read("queue.yaml"), "- old-first\n- second\n");
  EXPECT_EQ(dir.read("consumed.yaml"), "- new-first\n");
}

TEST(QueueFileTest, TakeWhileTakesJobsInOrderInOneWrite) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "# top\n- command: j<<i>>\n  i: [1, 2, 3, 4]\n- last\n"));
  int room = 3;
  TakeBatch batch = queue.take_while([&](const JobSpec&) { return room-- > 0; });
  ASSERT_EQ(batch.taken.size(), 3u);
  EXPECT_EQ(batch.taken[0].params, (Params{{"i", "1"}}));
  EXPECT_EQ(batch.taken[2].params, (Params{{"i", "3"}}));
  ASSERT_TRUE(std::holds_alternative<HeadNotPlaceable>(batch.stopped));
  EXPECT_EQ(std::get<HeadNotPlaceable>(batch.stopped).job.params, (Params{{"i", "4"}}));
  EXPECT_EQ(dir.read("queue.yaml"), "# top\n- command: j<<i>>\n  i: [4]\n- last\n");
  EXPECT_EQ(YAML::LoadFile(dir.file("consumed.yaml")).size(), 3u);

  batch = queue.take_while([](const JobSpec&) { return true; });
  EXPECT_EQ(batch.taken.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<QueueEmpty>(batch.stopped));
  EXPECT_EQ(dir.read("queue.yaml"), "# top\n[]\n");
}

TEST(QueueFileTest, TakesFollowEditsMadeBetweenThem) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- a\n- b\n- c\n"));
  TakeResult result = queue.take_first(always);
  ASSERT_TRUE(std::holds_alternative<Taken>(result));
  EXPECT_EQ(std::get<Taken>(result).job.command, "a");
  // Same length, other jobs: what the file says now counts.
  dir.write("queue.yaml", "- x\n- y\n");
  result = queue.take_first(always);
  ASSERT_TRUE(std::holds_alternative<Taken>(result));
  EXPECT_EQ(std::get<Taken>(result).job.command, "x");
  ASSERT_TRUE(queue.append("- z\n").ok());
  TakeBatch batch = queue.take_while(always);
  ASSERT_EQ(batch.taken.size(), 2u);
  EXPECT_EQ(batch.taken[0].command, "y");
  EXPECT_EQ(batch.taken[1].command, "z");
  EXPECT_EQ(dir.read("queue.yaml"), "[]\n");
}

TEST(QueueFileTest, JobsCarryTheirLineInTheFileAsItIsWhenTaken) {
  testing::TempDir dir;
  QueueFile queue(
      dir.write("queue.yaml", "# header\n- command: run <<i>>\n  i: [1, 2]\n\n# next\n- last\n"));
  std::vector<int> lines;
  for (int i = 0; i < 3; ++i) {
    TakeResult result = queue.take_first(always);
    ASSERT_TRUE(std::holds_alternative<Taken>(result));
    lines.push_back(std::get<Taken>(result).job.line);
  }
  // After the product's last job is gone, `- last` moved up to line 4.
  EXPECT_EQ(lines, (std::vector<int>{2, 2, 4}));
}

// Counts the watcher's reports.
struct WatchedQueue {
  explicit WatchedQueue(QueueFile& file) {
    Result<std::unique_ptr<QueueWatcher>> opened =
        QueueWatcher::open(file.path(), file.own_changes(), [this] { ++changes; });
    if (!opened) throw std::runtime_error(opened.status().message());
    watcher = std::move(*opened);
  }
  int drain() {
    watcher->step(Clock::now());
    return std::exchange(changes, 0);
  }
  int changes = 0;
  std::unique_ptr<QueueWatcher> watcher;
};

TEST(QueueFileTest, TheWatcherReportsOnlyChangesMadeElsewhere) {
  testing::TempDir dir;
  std::string path = dir.write("queue.yaml", "- a\n- b\n");
  QueueFile queue(path);
  WatchedQueue watched(queue);
  ASSERT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
  EXPECT_EQ(watched.drain(), 0);
  // Looking at a queue whose head cannot be placed changes nothing: no echo,
  // or an idle runner would look again and again.
  for (int i = 0; i < 3; ++i) {
    queue.take_first([](const JobSpec&) { return false; });
    EXPECT_EQ(watched.drain(), 0);
  }
  dir.write("queue.yaml", "- b\n- c\n");
  EXPECT_GE(watched.drain(), 1);
  // Another process takes a job: its new queue is news.
  pid_t child = spawn([&] {
    QueueFile other(path);
    return std::holds_alternative<Taken>(other.take_first(always));
  });
  ASSERT_EQ(exit_status(child), 0);
  EXPECT_GE(watched.drain(), 1);
  // Another runner that only looks is not: two idle runners on one queue
  // must not wake each other up in turn.
  child = spawn([&] {
    QueueFile other(path);
    return std::holds_alternative<HeadNotPlaceable>(
        other.take_first([](const JobSpec&) { return false; }));
  });
  ASSERT_EQ(exit_status(child), 0);
  EXPECT_EQ(watched.drain(), 0);
  // A release is news when a take found the queue locked.
  {
    LiveProcess holder;
    dir.write("queue.yaml.lock", std::to_string(holder.pid()) + "\n");
    EXPECT_TRUE(std::holds_alternative<QueueUnavailable>(queue.take_first(always)));
    watched.drain();
    std::filesystem::remove(dir.file("queue.yaml.lock"));
    EXPECT_EQ(watched.drain(), 1);
  }
  queue.take_first(always);
  EXPECT_EQ(watched.drain(), 0);
}

TEST(QueueFileTest, ReadEntriesParsesWithoutTouching) {
  testing::TempDir dir;
  QueueFile missing(dir.file("queue.yaml"));
  EXPECT_EQ(testing::failure_of(missing.read_entries()).detail(),
            "no such queue file; create it or pass --queue-file");
  QueueFile queue(dir.write("queue.yaml", k_queue));
  std::vector<QueueEntry> entries = testing::value_of(queue.read_entries());
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(job_count(entries[0]), 12u);
  EXPECT_EQ(entries[1].line, 8);
  EXPECT_EQ(dir.read("queue.yaml"), k_queue);
}

TEST(QueueFileTest, AppendCreatesAMissingQueue) {
  testing::TempDir dir;
  QueueFile queue(dir.file("queue.yaml"));
  ASSERT_TRUE(queue.append("- echo one\n").ok());
  EXPECT_EQ(dir.read("queue.yaml"), "- echo one\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueFileTest, AppendKeepsTheQueueAsWritten) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", k_queue));
  ASSERT_TRUE(queue.append("# more\n- command: extra <<x>>\n  x: [1, 2]\n").ok());
  EXPECT_EQ(dir.read("queue.yaml"), k_queue + "# more\n- command: extra <<x>>\n  x: [1, 2]\n");
}

TEST(QueueFileTest, AppendNeverWritesAQueueThatDoesNotParse) {
  testing::TempDir dir;
  std::string broken = "- [unclosed\n";
  QueueFile queue(dir.write("queue.yaml", broken));
  EXPECT_EQ(testing::failure_of(queue.append("- a\n")).file(), dir.file("queue.yaml"));
  EXPECT_EQ(dir.read("queue.yaml"), broken);
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueFileTest, AppendRejectsInvalidItems) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- a\n"));
  EXPECT_EQ(testing::failure_of(queue.append("- model: [x]\n")).file(), "jobs to add");
  EXPECT_EQ(testing::failure_of(queue.append("key: value\n")).file(), "jobs to add");
  EXPECT_EQ(dir.read("queue.yaml"), "- a\n");
}

TEST(QueueFileTest, AppendWaitsForTheLockOfAnotherProcess) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- a\n"));
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t holder = spawn([&] {
    std::optional<QueueLock> lock = testing::value_of(QueueLock::try_acquire(queue.path(), {}));
    if (!lock) return false;
    if (::write(ready[1], "x", 1) != 1) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    dir.write("released-by-holder", "yes");
    return true;
  });
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_TRUE(queue.append("- b\n", 10000).ok());
  // The holder let go before the append could write.
  EXPECT_EQ(dir.read("released-by-holder"), "yes");
  EXPECT_EQ(dir.read("queue.yaml"), "- a\n- b\n");
  EXPECT_EQ(exit_status(holder), 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(QueueFileTest, AppendGivesUpWhenTheLockStaysTaken) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- a\n"));
  LiveProcess other;
  dir.write("queue.yaml.lock", std::to_string(other.pid()) + "\n");
  Status added = queue.append("- b\n", 30);
  ASSERT_FALSE(added.ok()) << "no error";
  EXPECT_NE(added.message().find("pid " + std::to_string(other.pid())), std::string::npos)
      << added.message();
  EXPECT_EQ(dir.read("queue.yaml"), "- a\n");
}

TEST(QueueFileTest, ConcurrentAppendsFromSeveralProcessesAllLand) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "# jobs\n"));
  constexpr int k_writers = 4;
  constexpr int k_jobs = 10;
  std::vector<pid_t> writers;
  for (int w = 0; w < k_writers; ++w)
    writers.push_back(spawn([&, w] {
      for (int j = 0; j < k_jobs; ++j)
        if (!queue.append("- job-" + std::to_string(w) + "-" + std::to_string(j) + "\n", 20000)
                 .ok())
          return false;
      return true;
    }));
  for (pid_t pid : writers) EXPECT_EQ(exit_status(pid), 0);
  std::vector<std::string> jobs = jobs_in(dir.read("queue.yaml"));
  ASSERT_EQ(jobs.size(), static_cast<std::size_t>(k_writers * k_jobs));
  for (int w = 0; w < k_writers; ++w) {
    // Each writer's jobs are all there, in the order it added them.
    std::vector<std::string> mine;
    std::string prefix = "job-" + std::to_string(w) + "-";
    for (const auto& job : jobs)
      if (job.rfind(prefix, 0) == 0) mine.push_back(job);
    std::vector<std::string> expected;
    for (int j = 0; j < k_jobs; ++j) expected.push_back(prefix + std::to_string(j));
    EXPECT_EQ(mine, expected);
  }
  EXPECT_EQ(dir.read("queue.yaml").rfind("# jobs\n", 0), 0u);
}

TEST(QueueFileTest, ConcurrentTakersNeverTakeAJobTwice) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml",
                            "- command: job <<i>>\n  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, "
                            "9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]\n"));
  constexpr int k_takers = 3;
  std::vector<pid_t> takers;
  for (int t = 0; t < k_takers; ++t)
    takers.push_back(spawn([&, t] {
      std::string mine;
      while (true) {
        TakeResult result = queue.take_first(always);
        if (std::holds_alternative<QueueEmpty>(result)) break;
        if (auto* taken = std::get_if<Taken>(&result))
          mine += "- " + taken->job.params[0].second + "\n";
        else if (std::holds_alternative<QueueUnavailable>(result))
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        else
          return false;
      }
      dir.write("taken-" + std::to_string(t), mine);
      return true;
    }));
  for (pid_t pid : takers) EXPECT_EQ(exit_status(pid), 0);
  std::vector<std::string> all;
  for (int t = 0; t < k_takers; ++t)
    for (const auto& job : jobs_in(dir.read("taken-" + std::to_string(t)))) all.push_back(job);
  std::sort(all.begin(), all.end(),
            [](const std::string& a, const std::string& b) { return std::stoi(a) < std::stoi(b); });
  std::vector<std::string> expected;
  for (int i = 0; i < 20; ++i) expected.push_back(std::to_string(i));
  EXPECT_EQ(all, expected);
  EXPECT_EQ(jobs_in(dir.read("consumed.yaml")).size(), 20u);
  EXPECT_TRUE(jobs_in(dir.read("queue.yaml")).empty());
}

TEST(QueueFileTest, WriteFileAtomicallyReplacesContentAndKeepsMode) {
  testing::TempDir dir;
  std::string path = dir.write("file.yaml", "old\n");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(write_file_atomically(path, "new\n"));
  EXPECT_EQ(testing::value_of(read_file(path)), "new\n");
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
  ASSERT_TRUE(write_file_atomically(dir.file("fresh.yaml"), "x\n"));
  EXPECT_EQ(testing::value_of(read_file(dir.file("fresh.yaml"))), "x\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            2);
  Result<std::string> absent = read_file(dir.file("absent"));
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().message(),
            "cannot read " + dir.file("absent") + ": No such file or directory");
}

}  // namespace
}  // namespace runner
