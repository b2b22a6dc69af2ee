// The HTML report's markup: one page, its style, its SVG timeline and its
// tables, written from what html_report_model computed it shows.
#include "runner/report/html_report.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "html_gpu_power.h"
#include "html_outputs.h"
#include "html_report_assets.h"
#include "html_report_model.h"
#include "html_results.h"
#include "html_services.h"
#include "runner/report/status_view.h"
#include "runner/ui/summary.h"
#include "timeline_runs.h"

namespace runner {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr double k_chart_width = 1000;
constexpr double k_percent_width = 56;
constexpr double k_axis_height = 28;
constexpr double k_row_height = 20;
constexpr double k_bar_height = 14;
constexpr std::size_t k_open_failures = 10;
constexpr std::size_t k_tooltip_chars = 400;
constexpr std::size_t k_table_command_chars = 120;

std::string css_class(JobOutcome outcome) {
  return outcome == JobOutcome::succeeded ? "ok" : std::string(outcome_name(outcome));
}

std::size_t columns(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

long long epoch_ms(SystemTime time) {
  return duration_cast<milliseconds>(time.time_since_epoch()).count();
}

std::string local_time(SystemTime time, const char* format) {
  time_t seconds = std::chrono::system_clock::to_time_t(time);
  struct tm local {};
  localtime_r(&seconds, &local);
  char text[64];
  std::strftime(text, sizeof text, format, &local);
  return text;
}

long local_offset_seconds(SystemTime time) {
  time_t seconds = std::chrono::system_clock::to_time_t(time);
  struct tm local {};
  localtime_r(&seconds, &local);
  return local.tm_gmtoff;
}

std::string job_title(const ReportJob& shown) {
  const CampaignJob& job = *shown.job;
  std::string how = describe_end(job);
  std::string text = fmt::format("#{} [{}] {}", job.id, describe_placement(job), how);
  if (job.is_service())
    text = (job.service == "true" ? "service " : "service " + job.service + " ") + text;
  text += job.outcome == JobOutcome::running ? " for " : " after ";
  text += format_duration(shown.took);
  text += "\nstarted " + local_time(job.start, "%Y-%m-%d %H:%M:%S");
  text += "\n" + shorten_command(job.command, k_tooltip_chars);
  return html_escape(text);
}

class Page {
 public:
  explicit Page(std::string& out) : m_out(out) {}
  template <typename... Args>
  void add(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(m_out), format, std::forward<Args>(args)...);
  }
  void raw(std::string_view text) { m_out.append(text); }

 private:
  std::string& m_out;
};

// One row per slot; a bar per job, or per run of jobs (timeline_runs.h)
// when `merged`.
void timeline(Page& page, const HtmlReportModel& model, bool merged) {
  std::size_t longest = 0;
  for (const ReportSlot& row : model.slots) longest = std::max(longest, columns(row.label));
  double label_width = std::clamp<double>(7.0 * static_cast<double>(longest) + 18, 110, 360);
  double width = label_width + k_chart_width + k_percent_width;
  double height = k_axis_height + k_row_height * static_cast<double>(model.slots.size()) + 8;
  SystemTime t0 = model.t0;
  SystemTime t1 = model.t1;
  double span = static_cast<double>(std::max<long long>(1000, time_between(t0, t1).count()));
  auto x_of = [&](SystemTime t) {
    return label_width + k_chart_width * static_cast<double>(time_between(t0, t).count()) / span;
  };
  auto y_of = [&](std::size_t row) {
    return k_axis_height + k_row_height * static_cast<double>(row) +
           (k_row_height - k_bar_height) / 2;
  };
  // Merged, jobs closer than a pixel share a bar.
  std::vector<ReportBarRun> runs =
      merged ? timeline_runs(model, milliseconds(static_cast<long long>(span / k_chart_width)))
             : std::vector<ReportBarRun>{};

  page.add(R"(<svg id="timeline" viewBox="0 0 {:.0f} {:.0f}" role="img" )"
           R"(aria-label="one row per slot, one bar per {}">)",
           width, height, merged ? "run of jobs" : "job");
  for (std::size_t r = 0; r < model.slots.size(); ++r) {
    const ReportSlot& row = model.slots[r];
    double y = k_axis_height + k_row_height * static_cast<double>(r);
    const char* band = !row.down.empty() ? "down" : r % 2 == 0 ? "band" : "";
    if (*band)
      page.add(R"(<rect class="{}" x="0" y="{:.1f}" width="{:.0f}" height="{:.0f}"/>)", band, y,
               width, k_row_height);
    page.add(R"(<text class="label" x="{:.0f}" y="{:.1f}" text-anchor="end">{}</text>)",
             label_width - 8, y + 14, html_escape(row.label));
    page.add(R"(<text class="{}" x="{:.0f}" y="{:.1f}" text-anchor="end">{}%</text>)",
             row.busy_percent < 50 ? "idle" : "", width - 6, y + 14, row.busy_percent);
  }

  // Time axis: about ten ticks on round local times.
  static constexpr long long k_steps[] = {1,     2,     5,     10,    15,     30,    60,
                                          120,   300,   600,   900,   1800,   3600,  7200,
                                          10800, 21600, 43200, 86400, 172800, 604800};
  long long span_s = static_cast<long long>(span / 1000);
  long long step = k_steps[std::size(k_steps) - 1];
  for (long long s : k_steps) {
    if (span_s / s <= 10) {
      step = s;
      break;
    }
  }
  const char* format = step < 60 ? "%H:%M:%S" : span_s >= 86400 ? "%m-%d %H:%M" : "%H:%M";
  long offset = local_offset_seconds(t0);
  long long first_local = (epoch_ms(t0) / 1000 + offset + step - 1) / step * step;
  for (long long tick = first_local; tick - offset <= epoch_ms(t1) / 1000; tick += step) {
    SystemTime t = SystemTime(std::chrono::seconds(tick - offset));
    double x = x_of(t);
    page.add(R"(<line class="grid" x1="{:.1f}" y1="{:.0f}" x2="{:.1f}" y2="{:.0f}"/>)", x,
             k_axis_height - 6, x, height - 4);
    page.add(R"(<text x="{:.1f}" y="16" text-anchor="middle">{}</text>)", x, local_time(t, format));
  }

  // A job's bars share its colour, title and data-job, which the page's
  // script uses to light them up together; a gang job's say their rank.
  auto job_bar = [&](const ReportJob& shown, const ReportBar& bar) {
    const CampaignJob& job = *shown.job;
    // A service's bar says its state, paler: it held its slot, it ran no job.
    std::string klass = job.is_service()
                            ? fmt::format("{} service", service_css_class(service_attempt_state(job)))
                            : css_class(job.outcome);
    double x = x_of(bar.start);
    std::string rank = job.is_gang() ? fmt::format(R"( data-rank="{}")", bar.rank) : "";
    page.add(R"(<rect class="job {}" data-job="{}"{} x="{:.2f}" y="{:.1f}" width="{:.2f}" )"
             R"(height="{:.0f}"><title>{}</title></rect>)",
             klass, job.id, rank, x, y_of(bar.row), std::max(0.8, x_of(shown.end) - x),
             k_bar_height, job_title(shown));
  };
  if (!merged) {
    for (const ReportJob& shown : model.jobs)
      for (const ReportBar& bar : shown.bars) job_bar(shown, bar);
  }
  for (const ReportBarRun& run : runs) {
    const ReportJob& first = model.jobs[run.first];
    if (run.count == 1) {
      job_bar(first, first.bars[run.first_bar]);
      continue;
    }
    double x = x_of(run.start);
    page.add(R"(<rect class="jobs {}" data-jobs="{}" x="{:.2f}" y="{:.1f}" width="{:.2f}" )"
             R"(height="{:.0f}"><title>{} jobs {}, #{} to #{})"
             "\nfrom {} to {}</title></rect>",
             css_class(first.job->outcome), run.count, x, y_of(run.row),
             std::max(0.8, x_of(run.end) - x), k_bar_height, run.count,
             outcome_name(first.job->outcome), first.job->id, model.jobs[run.last].job->id,
             local_time(run.start, "%H:%M:%S"), local_time(run.end, "%H:%M:%S"));
  }
  page.raw("</svg>\n");
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped.push_back(c);
    }
  }
  return escaped;
}

namespace {

// The page's head, title and a line per run.
void html_head_and_runs(Page& page, const HtmlReportModel& model, const std::string& title) {
  page.add(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<title>{}</title><style>",
      html_escape(title));
  page.raw(k_report_style);
  page.add("</style></head><body>\n<h1>{}</h1>\n", html_escape(title));
  for (const RunStatus& status : model.runs) {
    const CampaignRun* run = status.run;
    std::string ended =
        run->alive ? "now" : local_time(run->end.value_or(run->last_event), "%H:%M:%S");
    page.add(
        "<p class=\"sub\">{} run <code>{}</code> (pid {}): {} → {} ({}), <b>{}</b>; "
        "{} slots on {}</p>\n",
        html_escape(run->mode), html_escape(run->id), run->pid,
        local_time(run->start, "%Y-%m-%d %H:%M:%S"), ended, format_duration(status.elapsed),
        html_escape(describe_run_state(status.state)), run->slots.size(),
        html_escape(run->hosts_file));
    for (const auto& [host, message] : run->host_failures)
      page.add("<p class=\"sub\">host <b>{}</b> down: {}</p>\n", html_escape(host),
               html_escape(message));
  }
  if (model.runs.empty()) page.raw("<p class=\"sub\">No run has been recorded yet.</p>\n");
}

// The cards: jobs by outcome, wall time, how busy the slots were.
void html_cards(Page& page, const HtmlReportModel& model) {
  page.raw("<div class=\"cards\">");
  auto card = [&](const char* klass, auto value, const char* what) {
    page.add("<div class=\"card {}\"><b>{}</b><span>{}</span></div>", klass, value, what);
  };
  card("", model.job_count, "jobs");
  card("ok", model.count(JobOutcome::succeeded), "succeeded");
  card("failed", model.count(JobOutcome::failed), "failed");
  if (model.count(JobOutcome::lost)) card("lost", model.count(JobOutcome::lost), "lost");
  if (model.count(JobOutcome::running))
    card("running", model.count(JobOutcome::running), "running");
  if (model.count(JobOutcome::unknown))
    card("", model.count(JobOutcome::unknown), "unknown (runner stopped)");
  card("", format_duration(model.available), "wall time");
  card("", fmt::format("{}%", model.utilisation),
       fmt::format("of {} slots' time busy", model.slots.size()).c_str());
  page.raw("</div>\n");
}

void html_timeline(Page& page, const HtmlReportModel& model, const HtmlReportOptions& options) {
  page.raw(
      "<h2>Timeline</h2>\n<div class=\"legend\">"
      "<span><i class=\"ok\"></i>succeeded</span><span><i class=\"failed\"></i>failed</span>"
      "<span><i class=\"lost\"></i>lost</span><span><i class=\"running\"></i>running</span>"
      "<span><i class=\"unknown\"></i>unknown</span>");
  if (!model.services.empty()) page.raw("<span>paler: services</span>");
  bool merged = bar_count(model) > options.max_timeline_bars;
  if (merged)
    page.raw(
        "<span>each bar is a run of a slot's consecutive jobs of one outcome (hover for which)"
        "</span>");
  page.raw(
      "<span>hover a bar for its command; right: share of the time each slot was busy"
      "</span></div>\n");
  timeline(page, model, merged);
}

void html_slot_utilisation(Page& page, const HtmlReportModel& model) {
  page.raw(
      "<h2>Slot utilisation</h2>\n<table id=\"slots\"><thead><tr><th>slot</th><th>busy</th>"
      "<th class=\"num\">busy time</th><th class=\"num\">idle time</th>"
      "<th class=\"num\">jobs</th><th>host</th></tr></thead><tbody>\n");
  for (const ReportSlot& row : model.slots) {
    long long percent = row.busy_percent;
    const char* level = percent < 50 ? " low" : percent < 80 ? " mid" : "";
    page.add(
        "<tr><td>{}</td><td><div class=\"meter{}\" title=\"{}%\"><div style=\"width:{}%\">"
        "</div></div></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td></tr>\n",
        html_escape(row.label), level, percent, percent, format_duration(row.busy),
        format_duration(std::max(milliseconds(0), model.available - row.busy)), row.jobs,
        row.down.empty() ? "" : "down: " + html_escape(row.down));
  }
  page.raw("</tbody></table>\n");
}

// Failures with their log tails.
void html_failures(Page& page, const HtmlReportModel& model, const std::string& state_dir) {
  page.add("<h2>Failures ({})</h2>\n", model.failures.size());
  if (model.failures.empty()) page.raw("<p class=\"muted\">No job failed.</p>\n");
  for (std::size_t i = 0; i < model.failures.size(); ++i) {
    const ReportFailure& failure = model.failures[i];
    const CampaignJob& job = *failure.job;
    page.add(
        "<details id=\"failure-{}\"{}><summary><span class=\"tag {}\">#{}</span> [{}] {} "
        "after {} — log: <code>{}</code></summary>\n<pre class=\"cmd\">{}</pre>\n",
        job.id, i < k_open_failures ? " open" : "", css_class(job.outcome), job.id,
        html_escape(describe_placement(job)), html_escape(describe_end(job)),
        format_duration(job.duration), html_escape(end_log_path(state_dir, job)),
        html_escape(job.command));
    if (job.is_gang()) {
      std::string ranks;
      for (const CampaignTask& task : job.tasks)
        ranks += fmt::format("{}rank {} on {}: <code>{}</code>", ranks.empty() ? "" : " · ",
                             task.rank, html_escape(task.slot),
                             html_escape(task_log_path(state_dir, job.id, task.rank)));
      page.add("<p class=\"muted\">{}</p>\n", ranks);
    }
    if (failure.log_tail) {
      if (failure.log_tail->empty()) {
        page.raw("<p class=\"muted\">The log is empty.</p>\n");
      } else {
        page.add("<pre class=\"log\">{}</pre>\n", html_escape(*failure.log_tail));
      }
    }
    page.raw("</details>\n");
  }
}

void html_slowest(Page& page, const HtmlReportModel& model) {
  page.raw(
      "<h2>Slowest jobs</h2>\n<table id=\"slowest\"><thead><tr><th class=\"num\">job</th>"
      "<th class=\"num\">duration</th><th>slot</th><th>outcome</th><th>command</th></tr>"
      "</thead><tbody>\n");
  for (std::size_t index : model.slowest) {
    const ReportJob& shown = model.jobs[index];
    page.add(
        "<tr><td class=\"num\">#{}</td><td class=\"num\">{}</td><td>{}</td>"
        "<td><span class=\"tag {}\">{}</span></td><td class=\"cmd\">{}</td></tr>\n",
        shown.job->id, format_duration(shown.took), html_escape(describe_placement(*shown.job)),
        css_class(shown.job->outcome), outcome_name(shown.job->outcome),
        html_escape(shorten_command(shown.job->command, k_table_command_chars)));
  }
  page.raw("</tbody></table>\n");
}

// Every job, as data for the script, which draws the table.
void html_jobs(Page& page, const HtmlReportModel& model) {
  nlohmann::json data = nlohmann::json::array();
  for (const ReportJob& shown : model.jobs) {
    const CampaignJob& job = *shown.job;
    if (job.is_service()) continue;  // listed in their own section
    data.push_back({job.id, describe_placement(job), std::string(outcome_name(job.outcome)),
                    css_class(job.outcome), epoch_ms(job.start),
                    local_time(job.start, "%m-%d %H:%M:%S"), shown.took.count(),
                    format_duration(shown.took),
                    job.outcome == JobOutcome::succeeded ? std::string("0") : describe_end(job),
                    shorten_command(job.command, k_table_command_chars)});
  }
  std::string heading =
      model.job_attempts == model.job_count
          ? fmt::format("Jobs ({})", model.job_count)
          : fmt::format("Jobs ({}, {} attempts)", model.job_count, model.job_attempts);
  page.add(
      "<h2>{}</h2>\n<p class=\"muted\">Click a column to sort by it. "
      "<span id=\"shown\"></span></p>\n"
      "<div class=\"scroll\"><table id=\"jobs\"><thead><tr>"
      "<th class=\"num\">job</th><th>slot</th><th>outcome</th><th>started</th>"
      "<th class=\"num\" data-first=\"desc\">duration</th><th>exit</th><th>command</th>"
      "</tr></thead><tbody></tbody></table></div>\n"
      "<p><button id=\"more\" hidden>show 500 more</button> "
      "<button id=\"all\" hidden>show all</button></p>\n"
      "<script type=\"application/json\" id=\"job-data\">",
      heading);
  page.raw(script_json(data));
  page.raw("</script>\n");
}

}  // namespace

std::string render_html_report(const Campaign& campaign, const HtmlReportOptions& options) {
  HtmlReportModel model = html_report_model(campaign, options);
  std::string out;
  out.reserve(8192 + model.jobs.size() * 900);
  Page page(out);
  html_head_and_runs(page, model,
                     options.title.empty() ? "runner report" : "runner report — " + options.title);
  html_cards(page, model);
  html_timeline(page, model, options);
  page.raw(html_gpu_power_section(model));
  page.raw(html_gpu_power_series_section(model, options.gpu_power));
  html_slot_utilisation(page, model);
  if (!model.services.empty())
    page.raw(html_services_section(model.services, model.service_log_tails, options.now));
  html_failures(page, model, campaign.state_dir);
  html_slowest(page, model);
  if (options.results)
    page.raw(
        html_results_section(*options.results, options.plots, options.max_results_rows_in_markup));
  std::vector<const CampaignJob*> shown_jobs;
  for (const ReportJob& shown : model.jobs) shown_jobs.push_back(shown.job);
  page.raw(html_outputs_section(shown_jobs));
  html_jobs(page, model);
  page.raw("<p class=\"muted\">Made by runner at ");
  page.add("{}.</p>\n<script>", local_time(options.now, "%Y-%m-%d %H:%M:%S"));
  page.raw(k_report_script);
  page.raw("</script>\n</body></html>\n");
  return out;
}

}  // namespace runner
