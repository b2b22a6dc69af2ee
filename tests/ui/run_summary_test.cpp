// The end-of-run summary with slot usage and the slowest jobs.
#include <gtest/gtest.h>

#include "runner/ui/summary.h"

namespace runner {
namespace {

using std::chrono::milliseconds;

FinishedJob job(JobId id, int code, long long ms, std::string label = "node01 gpu=0") {
  FinishedJob finished;
  finished.id = id;
  finished.label = std::move(label);
  finished.command = "python bench.py --id " + std::to_string(id);
  finished.exit = JobExit::exited(code);
  finished.log_path = "q.runner/logs/" + std::to_string(id) + ".log";
  finished.duration = milliseconds(ms);
  return finished;
}

TEST(RunSummary, CountsSlotUsageSlowestAndFailures) {
  std::vector<FinishedJob> jobs = {job(1, 0, 60'000), job(2, 3, 240'000, "node01 gpu=1"),
                                   job(3, 0, 30'000)};
  std::vector<SlotUsage> slots = {{"node01 gpu=0", milliseconds(90'000), 2},
                                  {"node01 gpu=1", milliseconds(240'000), 1}};
  EXPECT_EQ(format_run_summary(jobs, slots, milliseconds(300'000)),
            "runner: 3 jobs: 2 succeeded, 1 failed; wall time 5m 00s\n"
            "runner: slots busy 55% of the time (5m 30s of 10m 00s slot time)\n"
            "  node01 gpu=0  1m 30s   30%  2 jobs\n"
            "  node01 gpu=1  4m 00s   80%  1 job\n"
            "runner: slowest jobs\n"
            "  #2 [node01 gpu=1] 4m 00s  python bench.py --id 2\n"
            "  #1 [node01 gpu=0] 1m 00s  python bench.py --id 1\n"
            "  #3 [node01 gpu=0] 30.0s  python bench.py --id 3\n"
            "runner: failed jobs\n"
            "  #2 [node01 gpu=1] exit 3 after 4m 00s — log: q.runner/logs/2.log\n"
            "      python bench.py --id 2\n");
}

TEST(RunSummary, SaysEachSlotsGpuEnergyAndTheirSum) {
  std::vector<FinishedJob> jobs = {job(1, 0, 60'000), job(2, 0, 60'000, "node01 gpu=1")};
  std::vector<SlotUsage> slots = {{"node01 gpu=0", milliseconds(60'000), 1, 12'345.0},
                                  {"node01 gpu=1", milliseconds(60'000), 1, 850.0},
                                  {"node01 #2", milliseconds(0), 0, std::nullopt}};
  std::string text = format_run_summary(jobs, slots, milliseconds(60'000), 0);
  EXPECT_NE(text.find("  node01 gpu=0  1m 00s  100%  1 job  12.3 kJ\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  node01 gpu=1  1m 00s  100%  1 job  850 J\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  node01 #2        0ms    0%  0 jobs\n"), std::string::npos) << text;
  EXPECT_NE(text.find("runner: GPU energy 13.2 kJ (where slots' GPUs were read)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(format_energy(4'560'000), "4.56 MJ");
}

TEST(RunSummary, NamesJobsWhoseLogsAreIncomplete) {
  std::vector<FinishedJob> jobs = {job(1, 0, 1000), job(2, 0, 1000), job(3, 0, 1000)};
  jobs[1].log_problem =
      "its log q.runner/logs/2.log is incomplete: 4096 bytes of output are "
      "missing (No space left on device)";
  std::string text = format_run_summary(jobs, {{"a", milliseconds(3000), 3}}, milliseconds(3000));
  EXPECT_NE(text.find("runner: incomplete job logs (output that could not be written is missing)\n"
                      "  #2 [node01 gpu=0] its log q.runner/logs/2.log is incomplete: 4096 bytes "
                      "of output are missing (No space left on device)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("#1 [node01 gpu=0] its log"), std::string::npos) << text;
}

TEST(RunSummary, CountsAndNamesJobsWhoseOutputsWereLost) {
  std::vector<FinishedJob> jobs = {job(1, 0, 1000), job(2, 0, 1000)};
  jobs[1].outputs_problem = "big.bin: No space left on device";
  std::string text = format_run_summary(jobs, {{"a", milliseconds(2000), 2}}, milliseconds(2000));
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "runner: 2 jobs: 2 succeeded, 0 failed, 1 with lost outputs; wall time 2.0s")
      << text;
  EXPECT_NE(text.find("runner: lost outputs (files that came back but could not be written here)\n"
                      "  #2 [node01 gpu=0] big.bin: No space left on device\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("incomplete job logs"), std::string::npos) << text;
}

TEST(RunSummary, AllSucceededHasNoFailureHeading) {
  std::string text = format_run_summary({job(1, 0, 1000), job(2, 0, 2000)},
                                        {{"a", milliseconds(3000), 2}}, milliseconds(4000));
  EXPECT_EQ(text.find("failed jobs"), std::string::npos) << text;
  EXPECT_NE(text.find("runner: slowest jobs\n  #2 [node01 gpu=0] 2.0s"), std::string::npos) << text;
}

TEST(RunSummary, OneJobNeedsNoSlowestList) {
  std::string text =
      format_run_summary({job(1, 0, 1000)}, {{"a", milliseconds(1000), 1}}, milliseconds(1000));
  EXPECT_EQ(text.find("slowest"), std::string::npos) << text;
}

TEST(RunSummary, ManySlotsShowOnlyTheLeastBusy) {
  std::vector<SlotUsage> slots;
  for (int i = 0; i < 20; ++i)
    slots.push_back({"gpu" + std::to_string(i), milliseconds(1000 * (20 - i)), 1});
  std::string text =
      format_run_summary({job(1, 0, 1000), job(2, 0, 1000)}, slots, milliseconds(20'000), 5, 3);
  EXPECT_NE(text.find("  the 3 least busy of 20 slots:\n  gpu19  1.0s    5%  1 job\n"
                      "  gpu18  2.0s   10%  1 job\n  gpu17  3.0s   15%  1 job\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("gpu0 "), std::string::npos) << text;
}

TEST(RunSummary, NoJobsIsJustTheCountsLine) {
  EXPECT_EQ(format_run_summary({}, {{"a", milliseconds(0), 0}}, milliseconds(1500)),
            "runner: no jobs ran; wall time 1.5s\n");
}

}  // namespace
}  // namespace runner
