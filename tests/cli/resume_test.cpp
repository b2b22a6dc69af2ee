// What a run decides about the state directory an earlier run left: refuse
// while that run lives, refuse naming the jobs it left unfinished, or with
// --resume adopt them as orphans for the scheduler.
#include "runner/cli/resume.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/config/config_error.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::value_of;

Fleet two_hosts() {
  return value_of(parse_hosts("- hostname: [node01, node02]\n  gpu: [0, 1]\n", "hosts.yaml"));
}

UnfinishedJob unfinished(JobId id, const std::string& host, long group_id) {
  UnfinishedJob job;
  job.id = id;
  job.host = host;
  job.group = {group_id, "mark-" + std::to_string(id)};
  job.start.job = id;
  job.start.host = host;
  job.start.command = "train --job " + std::to_string(id);
  job.start.template_command = "train --job <<n>>";
  job.start.params = {{"n", std::to_string(id)}};
  job.start.slots_needed = 2;
  job.start.timeout = "90s";
  job.start.retries = 3;
  job.start.attempt = 2;
  job.start.requeues = 1;
  return job;
}

// A pid that no process has: a child that has ended and been reaped.
long ended_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

std::string refusal(const JournalReplay& replay, bool resume) {
  try {
    static_cast<void>(jobs_to_resume(replay, two_hosts(), "/s/journal.jsonl", resume));
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a refusal";
  return "";
}

// The one job --resume adopts of `replay`.
OrphanJob only_orphan(const JournalReplay& replay) {
  std::vector<OrphanJob> orphans =
      jobs_to_resume(replay, two_hosts(), "/s/journal.jsonl", /*resume=*/true);
  EXPECT_EQ(orphans.size(), 1u);
  return orphans.empty() ? OrphanJob{} : orphans[0];
}

TEST(JobsToResume, NothingLeftIsNothingToAdopt) {
  EXPECT_TRUE(jobs_to_resume({}, two_hosts(), "/s/journal.jsonl", false).empty());
}

TEST(JobsToResume, ARunWhoseProcessLivesRefusesEvenWithResume) {
  JournalReplay replay;
  replay.open_runs.push_back({"r1", static_cast<long>(getppid()), "2024-05-01T10:00:00Z"});
  std::string why = refusal(replay, /*resume=*/true);
  EXPECT_NE(why.find("another runner (pid " + std::to_string(getppid())), std::string::npos) << why;
  EXPECT_NE(why.find("/s/journal.jsonl"), std::string::npos) << why;
  EXPECT_NE(why.find("--state-dir"), std::string::npos) << why;
}

TEST(JobsToResume, ARunThatDiedOrIsThisProcessIsNoOtherRunner) {
  JournalReplay replay;
  replay.open_runs.push_back({"r1", ended_pid(), "2024-05-01T10:00:00Z"});
  replay.open_runs.push_back({"r2", static_cast<long>(getpid()), "2024-05-01T11:00:00Z"});
  replay.open_runs.push_back({"r3", 0, ""});
  EXPECT_TRUE(jobs_to_resume(replay, two_hosts(), "/s/journal.jsonl", false).empty());
}

TEST(JobsToResume, UnfinishedJobsWithoutResumeRefuseNamingEachAndTheFix) {
  JournalReplay replay;
  replay.unfinished.push_back(unfinished(3, "node01", 4242));
  replay.unfinished.push_back(unfinished(5, "node02", 0));
  std::string why = refusal(replay, /*resume=*/false);
  EXPECT_NE(why.find("without finishing 2 jobs (see /s/journal.jsonl)"), std::string::npos) << why;
  EXPECT_NE(why.find("\n  #3 on node01 (process group 4242): train --job 3"), std::string::npos)
      << why;
  EXPECT_NE(why.find("\n  #5 on node02: train --job 5"), std::string::npos) << why;
  EXPECT_NE(why.find("Run again with --resume"), std::string::npos) << why;
}

TEST(JobsToResume, ARefusalListsTenJobsAndCountsTheRest) {
  JournalReplay replay;
  for (JobId id = 1; id <= 13; ++id) replay.unfinished.push_back(unfinished(id, "node01", 0));
  std::string why = refusal(replay, /*resume=*/false);
  EXPECT_NE(why.find("#10 on node01"), std::string::npos) << why;
  EXPECT_EQ(why.find("#11 on node01"), std::string::npos) << why;
  EXPECT_NE(why.find("\n  ... and 3 more"), std::string::npos) << why;
}

TEST(JobsToResume, ResumeAdoptsEachJobAsTheQueueGaveIt) {
  JournalReplay replay;
  replay.unfinished.push_back(unfinished(7, "node02", 4242));
  OrphanJob orphan = only_orphan(replay);
  EXPECT_EQ(orphan.id, 7u);
  EXPECT_EQ(orphan.host, 1);
  EXPECT_EQ(orphan.group, (ProcessGroup{4242, "mark-7"}));
  EXPECT_TRUE(orphan.was_running);
  EXPECT_EQ(orphan.attempt, 2);
  EXPECT_EQ(orphan.requeues, 1);
  EXPECT_EQ(orphan.spec.command, "train --job <<n>>");
  EXPECT_EQ(orphan.spec.params, (Params{{"n", "7"}}));
  EXPECT_EQ(orphan.spec.slots, 2);
  EXPECT_EQ(orphan.spec.timeout_text, "90s");
  EXPECT_EQ(orphan.spec.timeout, std::chrono::seconds(90));
  EXPECT_EQ(orphan.spec.retries, 3);
}

TEST(JobsToResume, AJobWaitingToRunAgainHasNoGroupToCheck) {
  JournalReplay replay;
  replay.unfinished.push_back(unfinished(7, "node01", 4242));
  replay.unfinished.back().running = false;
  OrphanJob orphan = only_orphan(replay);
  EXPECT_FALSE(orphan.was_running);
  EXPECT_EQ(orphan.group, ProcessGroup{});
}

TEST(JobsToResume, AHostNoLongerInTheFleetIsNone) {
  JournalReplay replay;
  replay.unfinished.push_back(unfinished(7, "node09", 4242));
  OrphanJob orphan = only_orphan(replay);
  EXPECT_EQ(orphan.host, -1);
}

TEST(JobsToResume, OtherRanksAreKeptOnTheHostsStillInTheFleet) {
  JournalReplay replay;
  UnfinishedJob job = unfinished(7, "node01", 100);
  job.start.nodes = 3;
  job.start.tasks = {{0, "node01", "node01", {}, "rank 0"},
                     {1, "node02", "node02", {}, "rank 1"},
                     {2, "node09", "node09", {}, "rank 2"}};
  job.rank_groups = {{1, {101, "m1"}}, {2, {102, "m2"}}};
  replay.unfinished.push_back(job);
  OrphanJob orphan = only_orphan(replay);
  ASSERT_EQ(orphan.other_ranks.size(), 1u);
  EXPECT_EQ(orphan.other_ranks[0].first, 1);
  EXPECT_EQ(orphan.other_ranks[0].second, (ProcessGroup{101, "m1"}));
}

}  // namespace
}  // namespace runner
