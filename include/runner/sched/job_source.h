// Where the scheduler takes jobs from: the queue file in a real run, a list
// in tests.
#pragma once

#include <functional>

#include "runner/queue/queue_file.h"

namespace runner {

class JobSource {
 public:
  virtual ~JobSource() = default;
  // Takes jobs from the front of the queue, in order, while can_place(job)
  // says yes, and of a long queue the jobs after them while
  // can_take_ahead(job) does; see QueueFile::take_while.
  virtual TakeBatch take_while(const std::function<bool(const JobSpec&)>& can_place,
                               const std::function<bool(const JobSpec&)>& can_take_ahead = {}) = 0;
};

// The queue file as a JobSource.
class QueueFileSource final : public JobSource {
 public:
  explicit QueueFileSource(QueueFile& file) : m_file(file) {}
  TakeBatch take_while(const std::function<bool(const JobSpec&)>& can_place,
                       const std::function<bool(const JobSpec&)>& can_take_ahead) override {
    return m_file.take_while(can_place, can_take_ahead);
  }

 private:
  QueueFile& m_file;
};

}  // namespace runner
