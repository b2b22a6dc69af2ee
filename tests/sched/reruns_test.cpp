// The jobs to run before the queue file's, on their own: those put back go
// first, orphans and jobs taken ahead after them in the order they came, an
// orphan runs as its next attempt (on its host if it ran on each), a
// broadcast step's share is not run again, and those taken ahead are
// counted.
#include "runner/sched/reruns.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::RecordingObserver;

Job job_of(JobId id) {
  Job job;
  job.id = id;
  job.spec.command = "job" + std::to_string(id);
  return job;
}

OrphanJob orphan_of(JobId id, int host, bool every_host = false) {
  OrphanJob orphan;
  orphan.id = id;
  orphan.spec.command = "orphan";
  orphan.spec.every_host = every_host;
  orphan.host = host;
  orphan.attempt = 2;
  orphan.requeues = 1;
  return orphan;
}

std::vector<JobId> drained(Reruns& reruns) {
  std::vector<JobId> ids;
  while (!reruns.empty()) ids.push_back(reruns.take_next().id);
  return ids;
}

TEST(Reruns, ThosePutBackGoFirstAndTheOthersInTheOrderTheyCame) {
  RecordingObserver observer;
  Reruns reruns(Mode::queue, observer);
  EXPECT_TRUE(reruns.empty());
  reruns.add_orphan(orphan_of(1, 0));
  reruns.add_taken_ahead(job_of(2));
  reruns.put_back(job_of(3));
  reruns.put_back(job_of(4));
  EXPECT_EQ(reruns.size(), 4u);
  EXPECT_EQ(reruns.next().id, 4u);
  EXPECT_EQ(drained(reruns), (std::vector<JobId>{4, 3, 1, 2}));
}

TEST(Reruns, AnOrphanRunsAsItsNextAttemptOnItsHostOnlyIfItRanOnEach) {
  RecordingObserver observer;
  Reruns reruns(Mode::queue, observer);
  reruns.add_orphan(orphan_of(5, 1));
  reruns.add_orphan(orphan_of(6, 2, true));
  Job anywhere = reruns.take_next();
  EXPECT_EQ(anywhere.id, 5u);
  EXPECT_EQ(anywhere.spec.command, "orphan");
  EXPECT_EQ(anywhere.attempt, 3);
  EXPECT_EQ(anywhere.requeues, 1);
  EXPECT_EQ(anywhere.pinned_host, -1);
  EXPECT_EQ(reruns.take_next().pinned_host, 2);
  EXPECT_TRUE(observer.notices.empty());
}

TEST(Reruns, ABroadcastStepsShareIsNotRunAgainAndSaysSo) {
  RecordingObserver observer;
  Reruns reruns(Mode::broadcast, observer);
  reruns.add_orphan(orphan_of(8, 0));
  EXPECT_TRUE(reruns.empty());
  ASSERT_EQ(observer.notices.size(), 1u);
  EXPECT_EQ(observer.notices[0],
            "job #8 was one slot's share of a broadcast step; broadcast steps are not run again "
            "(it is in consumed.yaml)");
}

TEST(Reruns, OnlyThoseTakenAheadAndNotRunAreCountedAsTakenAhead) {
  RecordingObserver observer;
  Reruns reruns(Mode::queue, observer);
  reruns.add_taken_ahead(job_of(1));
  reruns.put_back(job_of(2));
  reruns.add_taken_ahead(job_of(3));
  EXPECT_EQ(reruns.taken_ahead_waiting(), 2u);
  EXPECT_FALSE(std::get<Queued>(reruns.next().state).taken_ahead);
  (void)reruns.take_next();
  (void)reruns.take_next();
  EXPECT_EQ(reruns.taken_ahead_waiting(), 1u);
}

}  // namespace
}  // namespace runner
