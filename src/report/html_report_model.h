// Private to the report area: what `runner report`'s page shows, computed
// from the campaign — the runs shown, one row per slot with how busy it
// was, every attempt with where its bar ends, the counts, the failures with
// their log tails, the slowest jobs and the services. Pure data, no markup: html_report
// writes it as HTML.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runner/report/campaign.h"
#include "runner/report/html_report.h"
#include "runner/report/service_status.h"
#include "runner/report/status_view.h"

namespace runner {

// The time from `from` to `to`; 0 when `to` is not after it.
inline std::chrono::milliseconds time_between(SystemTime from, SystemTime to) {
  return to > from ? std::chrono::duration_cast<std::chrono::milliseconds>(to - from)
                   : std::chrono::milliseconds(0);
}

// A row of the timeline and of the utilisation table: one slot (a lane).
struct ReportSlot {
  std::string label;
  std::string host;
  int index = 0;
  std::chrono::milliseconds busy{0};
  long long busy_percent = 0;  // of the shown runs' wall time, at most 100
  std::size_t jobs = 0;
  std::string down;  // its host's failure, when the host went down
};

// One bar of a job: a slot one of its tasks held.
struct ReportBar {
  std::size_t row = 0;  // in HtmlReportModel::slots
  SystemTime start;     // its task's start
  int rank = 0;         // its task's, for a gang job
};

// An attempt of a job of a shown run, with where its bars end.
struct ReportJob {
  const CampaignJob* job = nullptr;
  SystemTime end;  // its end, or the report's time while it runs
  std::chrono::milliseconds took{0};
  std::vector<ReportBar> bars;  // one per slot it held, on each of a gang job's nodes
};

// A job whose last attempt failed, was lost or has an unknown end.
struct ReportFailure {
  const CampaignJob* job = nullptr;
  std::optional<std::string> log_tail;  // nullopt: not shown (no reader, or too many failures)
};

struct HtmlReportModel {
  std::vector<RunStatus> runs;    // the runs shown, in start order
  std::vector<ReportSlot> slots;  // fleet order, then slots only their jobs name
  std::vector<ReportJob> jobs;    // every attempt, run by run, in start order, services' too
  std::size_t job_attempts = 0;   // of jobs, services left out
  SystemTime t0;                  // the span of the timeline
  SystemTime t1;
  std::chrono::milliseconds available{0};  // the shown runs' wall time
  // Jobs counted by their last attempt: in all, and by outcome.
  std::size_t job_count = 0;
  std::array<std::size_t, 5> outcome_counts{};  // indexed by JobOutcome
  long long utilisation = 0;                    // percent of all slots' time busy
  std::vector<ReportFailure> failures;
  std::vector<std::size_t> slowest;  // indices into jobs, slowest first, services left out
  // The shown runs' services, apart from the jobs counted above; each
  // one's log tail (when asked for), for those that failed.
  std::vector<ServiceStatus> services;
  std::vector<std::optional<std::string>> service_log_tails;  // one per service

  std::size_t count(JobOutcome outcome) const {
    return outcome_counts[static_cast<std::size_t>(outcome)];
  }
};

// The page's content for `options` (its runs, time, log tails, limits).
HtmlReportModel html_report_model(const Campaign& campaign, const HtmlReportOptions& options);

}  // namespace runner
