// Where the scheduler takes jobs from: the queue file in a real run, a list
// in tests.
#pragma once

#include <functional>

#include "runner/queue/queue_file.h"

namespace runner {

class JobSource {
 public:
  virtual ~JobSource() = default;
  // Looks at the first job; removes and returns it only if can_place(job).
  virtual TakeResult take_first(const std::function<bool(const JobSpec&)>& can_place) = 0;
};

// The queue file as a JobSource.
class QueueFileSource final : public JobSource {
 public:
  explicit QueueFileSource(QueueFile& file) : m_file(file) {}
  TakeResult take_first(const std::function<bool(const JobSpec&)>& can_place) override {
    return m_file.take_first(can_place);
  }

 private:
  QueueFile& m_file;
};

}  // namespace runner
