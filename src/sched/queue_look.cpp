// The scheduler's looks at the queue (see queue_look.h).
#include "runner/sched/queue_look.h"

#include <fmt/format.h>

#include "runner/core/debug_log.h"

namespace runner {

void QueueLook::stopped(const TakeBatch& batch, Clock::time_point now) {
  if (std::holds_alternative<QueueEmpty>(batch.stopped)) {
    m_empty = true;
    if (batch.taken.empty()) m_last_report.clear();
    return;
  }
  if (const auto* unavailable = std::get_if<QueueUnavailable>(&batch.stopped)) {
    m_empty = false;
    report_once(
        unavailable->parse_error
            ? fmt::format("{}; fix the file, the run goes on when it parses", unavailable->reason)
            : fmt::format("queue {}; waiting", unavailable->reason));
    retry_from(now);
  }
}

void QueueLook::report_once(const std::string& message) {
  if (message == m_last_report) return;
  m_last_report = message;
  m_observer.notice(message);
}

void QueueLook::head_waits(std::string why) {
  if (why != m_head_wait_said) debug_log::detail("the queue's head waits: {}", why);
  m_head_wait_said = std::move(why);
}

void QueueLook::retry_if_due(Clock::time_point now) {
  if (m_retry_at && now >= *m_retry_at) {
    m_retry_at.reset();
    m_due = true;
  }
}

}  // namespace runner
