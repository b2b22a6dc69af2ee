// The scheduler's looks at the queue on their own: a problem of the queue
// said once until jobs are taken, a queue that cannot be read looked at
// again after the retry interval, and an empty queue remembered.
#include "runner/sched/queue_look.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::RecordingObserver;

const Clock::time_point t0 = Clock::time_point{} + 1h;

TakeBatch stopped_by(std::variant<QueueEmpty, HeadNotPlaceable, QueueUnavailable> stop) {
  TakeBatch batch;
  batch.stopped = std::move(stop);
  return batch;
}

TEST(QueueLook, AProblemIsSaidOnceUntilJobsAreTaken) {
  RecordingObserver observer;
  QueueLook look(observer, 5s);
  look.report_once("the next job cannot run");
  look.report_once("the next job cannot run");
  EXPECT_EQ(observer.notices.size(), 1u);
  look.took();
  look.report_once("the next job cannot run");
  EXPECT_EQ(observer.notices.size(), 2u);
}

TEST(QueueLook, AQueueThatCannotBeReadIsSaidAndLookedAtAgainAfterTheRetryInterval) {
  RecordingObserver observer;
  QueueLook look(observer, 5s);
  look.begin();
  EXPECT_FALSE(look.due());
  look.stopped(stopped_by(QueueUnavailable{"locked by pid 12"}), t0);
  EXPECT_EQ(observer.notices, std::vector<std::string>{"queue locked by pid 12; waiting"});
  EXPECT_EQ(look.next_retry(), t0 + 5s);
  look.retry_if_due(t0 + 4s);
  EXPECT_FALSE(look.due());
  look.retry_if_due(t0 + 5s);
  EXPECT_TRUE(look.due());
  EXPECT_FALSE(look.next_retry());
}

TEST(QueueLook, AnEmptyQueueIsRememberedUntilALookLeavesJobs) {
  RecordingObserver observer;
  QueueLook look(observer, 5s);
  EXPECT_FALSE(look.empty());
  look.stopped(stopped_by(QueueEmpty{}), t0);
  EXPECT_TRUE(look.empty());
  EXPECT_FALSE(look.next_retry());
  look.left_jobs();
  EXPECT_FALSE(look.empty());
}

}  // namespace
}  // namespace runner
