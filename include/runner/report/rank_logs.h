// A gang job's logs read as one, for `runner log`: every line of each
// rank's log (logs/<id>.<rank>.log) prefixed with "[rank 1 node02] ", rank
// after rank, and then what each log gains (for --follow). Reading only.
//
// Threading: none.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/report/campaign.h"

namespace runner {

// Takes bytes to show; false when they could not be written.
using TextSink = std::function<bool(std::string_view)>;

// The rank logs of one gang job.
class RankLogs {
 public:
  RankLogs(const std::string& state_dir, const CampaignJob& job);

  // Gives `out` the whole lines the logs gained since the last call, each
  // prefixed; with `to_end`, also a last line that has no newline yet,
  // ended with one. False when `out` failed.
  bool copy_new(const TextSink& out, bool to_end);

 private:
  struct RankLog {
    std::string path;
    std::string prefix;  // "[rank 1 node02] "
    off_t offset = 0;
    std::string partial;  // the start of a line whose end is not written yet
  };
  bool copy_new(RankLog& log, const TextSink& out, bool to_end);

  std::vector<RankLog> m_logs;  // rank order
};

}  // namespace runner
