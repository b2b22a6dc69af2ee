// What the scheduler's looks at the queue found and when it looks again:
// whether something changed that may let a job be taken, whether the last
// look found no job, when to look again at a queue that could not be read
// (or after a journal that could not be written), and what was said of the
// queue's problems: each said once, and why its head waits told to the
// debug log when that changes.
#pragma once

#include <optional>
#include <string>

#include "runner/core/clock.h"
#include "runner/queue/queue_file.h"
#include "runner/sched/run_observer.h"

namespace runner {

class QueueLook {
 public:
  QueueLook(RunObserver& observer, Clock::duration retry_interval)
      : m_observer(observer), m_retry_interval(retry_interval) {}

  // The queue file, or what lets a job be taken, changed: look again.
  void changed() { m_due = true; }
  bool due() const { return m_due; }
  // A look begins.
  void begin() { m_due = false; }

  // The look took jobs: the queue was not empty, and a problem said before
  // may be said again.
  void took() {
    m_empty = false;
    m_last_report.clear();
  }
  // The look left jobs in the queue.
  void left_jobs() { m_empty = false; }
  // The last look found no job.
  bool empty() const { return m_empty; }
  // What `batch`'s stop means when the queue had no job left, or could not
  // be read (said, and looked at again after the retry interval).
  void stopped(const TakeBatch& batch, Clock::time_point now);

  // Says `message` unless it is what was said last.
  void report_once(const std::string& message);
  // Tells the debug log why the queue's head waits, when that changed.
  void head_waits(std::string why);

  // Looks again after the retry interval.
  void retry_from(Clock::time_point now) { m_retry_at = now + m_retry_interval; }
  // Timers: a retry whose time came makes the next look due.
  void retry_if_due(Clock::time_point now);
  std::optional<Clock::time_point> next_retry() const { return m_retry_at; }

 private:
  RunObserver& m_observer;
  Clock::duration m_retry_interval;
  bool m_due = true;
  bool m_empty = false;
  std::optional<Clock::time_point> m_retry_at;
  std::string m_last_report;     // to say each queue problem once
  std::string m_head_wait_said;  // why the queue's head waited, as the debug log last said
};

}  // namespace runner
