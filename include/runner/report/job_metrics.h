// The numbers a job produced: what its `metrics:` patterns find in its log,
// and the numbers of the files collected from it (state_dir/outputs/<id>/),
// for `runner results`. Reading only.
//
// Threading: jobs_metrics reads on threads of its own, which share one
// CollectedJobs; a MetricPatterns is one thread's.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "runner/config/params.h"
#include "runner/config/pattern.h"
#include "runner/report/campaign.h"
#include "runner/report/results_table.h"

namespace runner {

// The numbers of one collected output file, by its name's ending: a `.json`
// object's top-level numeric fields; a `.csv` or `.tsv` file's last row,
// the columns whose value is a number, named by the header. Empty for any
// other file or text that is not such a table or object. Pure: job_metrics
// gives it only the lines of a table it reads (its first and its last).
Params output_numbers(std::string_view file_name, std::string_view text);

// Told what a reading passed over and why (a file too big, a line of a log
// whose match stopped at a limit); the reading goes on. Empty: no one is
// told.
using ResultsWarning = std::function<void(const std::string&)>;

// The `metrics:` patterns of a campaign's jobs, each compiled once
// however many jobs share it.
class MetricPatterns {
 public:
  // `text` compiled, or nullptr when it cannot be a metric's pattern (the
  // queue's check lets none through; a hand-edited journal might).
  const Pattern* find(const std::string& text);

 private:
  std::unordered_map<std::string, std::optional<Pattern>> m_compiled;
};

// The ids of the jobs with a folder in state_dir/outputs/, listed once, when
// a job whose folder the journal does not name is first asked about: one
// listing costs less than a look for each job, and none at all when the
// journal names every job's folder.
class CollectedJobs {
 public:
  explicit CollectedJobs(std::string state_dir) : m_state_dir(std::move(state_dir)) {}
  // Safe to ask from several threads at once.
  bool has(JobId id) const;

 private:
  std::string m_state_dir;
  mutable std::once_flag m_listed;
  mutable std::unordered_set<JobId> m_ids;
};

// The job's metrics (of `job`, its last attempt), name → value as written:
// the numbers of that attempt's collected outputs (every .json/.csv/.tsv
// file under the folder the journal says they went to, else
// attempt_outputs_dir's in the state directory, in path order, a later
// file's field replacing an earlier one's; a file too big to read is passed
// over and said), and apart from them its
// `metrics:` patterns' last matches in its log (rank 0's for a job that
// spans hosts), the log read once for all of them. A missing log or
// outputs directory gives nothing. `collected` and `patterns` are kept for
// every job.
JobMetrics job_metrics(const std::string& state_dir, const CampaignJob& job,
                       const CollectedJobs& collected, MetricPatterns& patterns,
                       const ResultsWarning& warn = {});

// job_metrics of each of `jobs`, in their order, read by several threads
// at once (one a core); `warn` is told what each reading passed over, job
// by job in that order, once all are read.
std::vector<JobMetrics> jobs_metrics(const std::string& state_dir,
                                     const std::vector<const CampaignJob*>& jobs,
                                     const ResultsWarning& warn = {});

// results_table of the campaign, each job's metrics read from its state
// directory.
ResultsTable read_results(const Campaign& campaign, ServiceRows services = ServiceRows::left_out,
                          const ResultsWarning& warn = {});

}  // namespace runner
