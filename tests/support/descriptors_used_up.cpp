// DescriptorsUsedUp: the soft descriptor limit lowered and restored.
#include "support/descriptors_used_up.h"

#include <fcntl.h>
#include <unistd.h>

namespace runner::testing {

DescriptorsUsedUp::DescriptorsUsedUp() {
  if (getrlimit(RLIMIT_NOFILE, &m_before) != 0) return;
  // open() takes the lowest free descriptor.
  int lowest_free = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (lowest_free < 0) return;
  close(lowest_free);
  rlimit lowered = m_before;
  lowered.rlim_cur = static_cast<rlim_t>(lowest_free);
  m_lowered = setrlimit(RLIMIT_NOFILE, &lowered) == 0;
}

DescriptorsUsedUp::~DescriptorsUsedUp() {
  if (m_lowered) setrlimit(RLIMIT_NOFILE, &m_before);
}

}  // namespace runner::testing
