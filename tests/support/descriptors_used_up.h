// A process that can open no more file descriptors, for as long as this
// object lives: its soft RLIMIT_NOFILE lowered to the lowest free
// descriptor, so the next open, inotify_init1 or signalfd fails with
// EMFILE. The limit is restored when it goes away. Only this test process
// is touched.
#pragma once

#include <sys/resource.h>

namespace runner::testing {

class DescriptorsUsedUp {
 public:
  DescriptorsUsedUp();
  ~DescriptorsUsedUp();
  DescriptorsUsedUp(const DescriptorsUsedUp&) = delete;
  DescriptorsUsedUp& operator=(const DescriptorsUsedUp&) = delete;

  // Whether the limit was lowered.
  bool ok() const { return m_lowered; }

 private:
  rlimit m_before{};
  bool m_lowered = false;
};

}  // namespace runner::testing
