// The end-of-run summary text.
#include "runner/ui/summary.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

using std::chrono::milliseconds;

FinishedJob job(JobId id, int code) {
  FinishedJob finished;
  finished.id = id;
  finished.label = "node01 gpu=0";
  finished.command = "python bench.py --id " + std::to_string(id);
  finished.exit = JobExit::exited(code);
  finished.log_path = "q.runner/logs/" + std::to_string(id) + ".log";
  finished.duration = milliseconds(65'000);
  return finished;
}

TEST(Summary, AllSucceeded) {
  std::vector<FinishedJob> jobs = {job(1, 0), job(2, 0)};
  EXPECT_EQ(format_summary(jobs, milliseconds(3'723'000)),
            "runner: 2 jobs: 2 succeeded, 0 failed; wall time 1h 02m 03s\n");
}

TEST(Summary, NoJobs) {
  EXPECT_EQ(format_summary({}, milliseconds(1500)), "runner: no jobs ran; wall time 1.5s\n");
}

TEST(Summary, ListsEachUnsuccessfulJobWithReasonLogAndCommand) {
  FinishedJob exit3 = job(12, 3);
  FinishedJob killed = job(4, -1);
  killed.exit = JobExit::killed("TERM");
  killed.label = "node02 gpu=1";
  FinishedJob unstartable = job(20, -1);
  unstartable.exit = JobExit::failed_because("cannot start: node03 refused the session");
  unstartable.log_path.clear();
  unstartable.duration = milliseconds(0);
  std::vector<FinishedJob> jobs = {job(1, 0), exit3, killed, unstartable};

  EXPECT_EQ(format_summary(jobs, milliseconds(90'000)),
            "runner: 4 jobs: 1 succeeded, 3 failed; wall time 1m 30s\n"
            "  #4 [node02 gpu=1] killed by TERM after 1m 05s — log: q.runner/logs/4.log\n"
            "      python bench.py --id 4\n"
            "  #12 [node01 gpu=0] exit 3 after 1m 05s — log: q.runner/logs/12.log\n"
            "      python bench.py --id 12\n"
            "  #20 [node01 gpu=0] cannot start: node03 refused the session\n"
            "      python bench.py --id 20\n");
}

TEST(Summary, LostAndCancelledAreCountedApart) {
  FinishedJob lost = job(5, -1);
  lost.exit = JobExit::lost_because("connection to node01 dropped");
  FinishedJob cancelled = job(6, -1);
  cancelled.exit = JobExit::killed("INT");
  cancelled.exit.cancelled = true;
  std::string text = format_summary({job(1, 0), job(2, 1), lost, cancelled}, milliseconds(500));
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "runner: 4 jobs: 1 succeeded, 1 failed, 1 lost, 1 cancelled; wall time 500ms");
  EXPECT_NE(text.find("  #5 [node01 gpu=0] lost: connection to node01 dropped after"),
            std::string::npos);
  EXPECT_NE(text.find("  #6 [node01 gpu=0] cancelled (killed by INT) after"), std::string::npos);
}

TEST(Summary, ServicesStoppedAtTheEndAreCountedApartAndNotListed) {
  FinishedJob service = job(1, -1);
  service.exit = JobExit::killed("TERM");
  service.exit.cancelled = true;
  service.service = true;
  FinishedJob died = job(3, 1);
  died.service = true;  // one that ended on its own is a failure
  EXPECT_EQ(format_summary({service, job(2, 0)}, milliseconds(500)),
            "runner: 1 job: 1 succeeded, 0 failed; 1 service stopped at the end; wall time 500ms\n");
  std::string text = format_summary({service, job(2, 0), died}, milliseconds(500));
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "runner: 2 jobs: 1 succeeded, 1 failed; 1 service stopped at the end; wall time 500ms");
  EXPECT_NE(text.find("  #3 "), std::string::npos);
  EXPECT_EQ(text.find("  #1 "), std::string::npos);
}

TEST(Summary, CutsLongListsShort) {
  std::vector<FinishedJob> jobs;
  for (JobId id = 1; id <= 10; ++id) jobs.push_back(job(id, 1));
  std::string text = format_summary(jobs, milliseconds(1000), 3);
  EXPECT_NE(text.find("  #3 "), std::string::npos);
  EXPECT_EQ(text.find("  #4 "), std::string::npos);
  EXPECT_NE(text.find("  … and 7 more\n"), std::string::npos);
}

TEST(Summary, CommandIsShownOnOneShortLine) {
  FinishedJob multi = job(1, 2);
  multi.command = "cd /work &&\n  python train.py \\\n    --epochs 3\n";
  std::string text = format_summary({multi}, milliseconds(1000));
  EXPECT_NE(text.find("\n      cd /work && python train.py \\ --epochs 3\n"), std::string::npos);
}

TEST(Summary, ShortenCommand) {
  EXPECT_EQ(shorten_command("  a\t b \n"), "a b");
  std::string long_command(150, 'x');
  std::string shortened = shorten_command(long_command);
  EXPECT_EQ(shortened, std::string(99, 'x') + "…");
  // Multi-byte characters are never cut in half.
  std::string accents;
  for (int i = 0; i < 60; ++i) accents += "é";
  EXPECT_EQ(shorten_command(accents, 10), "ééééééééé…");
  EXPECT_EQ(shorten_command(accents, 60), accents);
}

TEST(Summary, FormatDuration) {
  EXPECT_EQ(format_duration(milliseconds(0)), "0ms");
  EXPECT_EQ(format_duration(milliseconds(850)), "850ms");
  EXPECT_EQ(format_duration(milliseconds(4'250)), "4.2s");
  EXPECT_EQ(format_duration(milliseconds(185'000)), "3m 05s");
  EXPECT_EQ(format_duration(milliseconds(7'390'000)), "2h 03m 10s");
  EXPECT_EQ(format_duration(milliseconds(273'900'000)), "3d 04h 05m");
}

}  // namespace
}  // namespace runner
