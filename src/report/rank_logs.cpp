// A gang job's rank logs, line by line with each rank's prefix.
#include "runner/report/rank_logs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace runner {

RankLogs::RankLogs(const std::string& state_dir, const CampaignJob& job) {
  for (const CampaignTask& task : job.tasks) {
    m_logs.push_back(RankLog{task_log_path(state_dir, job.id, task.rank),
                             "[rank " + std::to_string(task.rank) + " " + task.host + "] "});
  }
}

bool RankLogs::copy_new(const TextSink& out, bool to_end) {
  for (RankLog& log : m_logs)
    if (!copy_new(log, out, to_end)) return false;
  return true;
}

bool RankLogs::copy_new(RankLog& log, const TextSink& out, bool to_end) {
  int fd = ::open(log.path.c_str(), O_RDONLY | O_CLOEXEC);
  bool written = true;
  if (fd >= 0) {
    char buffer[65536];
    while (written) {
      ssize_t n = ::pread(fd, buffer, sizeof buffer, log.offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      log.offset += n;
      std::string_view rest(buffer, static_cast<std::size_t>(n));
      std::string lines;
      for (std::size_t eol; (eol = rest.find('\n')) != std::string_view::npos;
           rest.remove_prefix(eol + 1)) {
        lines.append(log.prefix).append(log.partial).append(rest.substr(0, eol + 1));
        log.partial.clear();
      }
      log.partial.append(rest);
      written = lines.empty() || out(lines);
    }
    ::close(fd);
  }
  if (written && to_end && !log.partial.empty()) {
    written = out(log.prefix + log.partial + "\n");
    log.partial.clear();
  }
  return written;
}

}  // namespace runner
