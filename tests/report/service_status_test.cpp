// Services in `runner status` and `runner report`: listed apart from the
// jobs with their state, ready time, restarts and log, read from a journal
// written as the runner writes it.
#include "runner/report/service_status.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include "gang_journal.h"
#include "runner/report/html_report.h"
#include "runner/report/status_view.h"
#include "support/text.h"

namespace runner {
namespace {

// Three slots: #1 the service dht, ready at 10:00:02 with an address; #2 an
// unnamed service that ended with exit 1 and was started again, not ready
// yet; #3 a client job that succeeded; #4 the service web, not ready in
// time on the client's slot after it.
constexpr std::string_view k_service_journal =
    R"({"event":"run_start","time":"2024-05-01T10:00:00.000Z","run":"r1","pid":77,"mode":"queue","hosts_file":"hosts.yaml","queue_file":"queue.yaml","slots":[{"label":"node01 gpu=0","host":"node01","index":0,"params":{"gpu":"0"}},{"label":"node01 gpu=1","host":"node01","index":1,"params":{"gpu":"1"}},{"label":"node01 gpu=2","host":"node01","index":2,"params":{"gpu":"2"}}],"queued":4}
{"event":"job_start","time":"2024-05-01T10:00:00.000Z","job":1,"run":"r1","command":"hivemind-dht","slot":"node01 gpu=0","host":"node01","slot_index":0,"params":{},"line":1,"template":"hivemind-dht","slots_needed":1,"attempt":1,"requeues":0,"service":"dht"}
{"event":"job_pgid","time":"2024-05-01T10:00:00.100Z","job":1,"pgid":4100}
{"event":"service_ready","time":"2024-05-01T10:00:02.000Z","job":1,"waited_ms":2000,"variables":{"dht.addr":"10.0.0.1:31337"}}
{"event":"job_start","time":"2024-05-01T10:00:01.000Z","job":2,"run":"r1","command":"tc-shaper","slot":"node01 gpu=1","host":"node01","slot_index":1,"params":{},"line":4,"template":"tc-shaper","slots_needed":1,"attempt":1,"requeues":0,"service":"true"}
{"event":"job_end","time":"2024-05-01T10:00:05.000Z","job":2,"exit":1,"signal":null,"error":null,"lost":false,"timed_out":false,"cancelled":false,"rerun":true,"duration_ms":4000}
{"event":"job_start","time":"2024-05-01T10:00:06.000Z","job":2,"run":"r1","command":"tc-shaper","slot":"node01 gpu=1","host":"node01","slot_index":1,"params":{},"line":4,"template":"tc-shaper","slots_needed":1,"attempt":2,"requeues":0,"service":"true"}
{"event":"job_start","time":"2024-05-01T10:00:03.000Z","job":3,"run":"r1","command":"client --peers 10.0.0.1:31337","slot":"node01 gpu=2","host":"node01","slot_index":2,"params":{},"line":7,"template":"client --peers <<dht.addr>>","slots_needed":1,"attempt":1,"requeues":0}
{"event":"job_end","time":"2024-05-01T10:00:13.000Z","job":3,"exit":0,"signal":null,"error":null,"lost":false,"timed_out":false,"cancelled":false,"rerun":false,"duration_ms":10000}
{"event":"job_start","time":"2024-05-01T10:00:14.000Z","job":4,"run":"r1","command":"web-server","slot":"node01 gpu=2","host":"node01","slot_index":2,"params":{},"line":8,"template":"web-server","slots_needed":1,"attempt":1,"requeues":0,"service":"web"}
{"event":"job_end","time":"2024-05-01T10:00:24.000Z","job":4,"exit":null,"signal":"TERM","error":null,"lost":false,"timed_out":true,"cancelled":false,"rerun":false,"duration_ms":10000}
)";

Campaign service_campaign() {
  Campaign campaign = campaign_from_records(testing::journal_records(k_service_journal),
                                            [](long) { return true; });
  campaign.state_dir = "q.runner";
  return campaign;
}

struct ServiceStatusView : ::testing::Test {
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
  Campaign campaign = service_campaign();
  SystemTime now = *parse_utc_time("2024-05-01T10:01:02.000Z");
  RunStatus status = run_status(campaign, campaign.runs[0], 0, now);
};

TEST_F(ServiceStatusView, JournalRecordsMakeServiceJobs) {
  const CampaignJob& dht = *campaign.find_job(1);
  EXPECT_EQ(dht.service, "dht");
  EXPECT_EQ(dht.ready_at, parse_utc_time("2024-05-01T10:00:02.000Z"));
  ASSERT_EQ(dht.ready_variables.size(), 1u);
  EXPECT_EQ(dht.ready_variables[0], (std::pair<std::string, std::string>("dht.addr",
                                                                          "10.0.0.1:31337")));
  EXPECT_FALSE(campaign.find_job(3)->is_service());
}

TEST_F(ServiceStatusView, ServicesAreListedApartFromJobs) {
  EXPECT_EQ(status.succeeded, 1u);
  EXPECT_EQ(status.failed, 0u);
  EXPECT_TRUE(status.running.empty());
  EXPECT_TRUE(status.failures.empty());
  ASSERT_EQ(status.services.size(), 3u);

  const ServiceStatus& dht = status.services[0];
  EXPECT_EQ(dht.name, "dht");
  EXPECT_EQ(dht.state, ServiceState::ready);
  EXPECT_EQ(dht.restarts, 0);
  EXPECT_EQ(dht.log, "q.runner/logs/1.log");
  EXPECT_EQ(describe_service_state(dht, now), "ready since 10:00:02 (1m 00s)");

  const ServiceStatus& shaper = status.services[1];
  EXPECT_EQ(shaper.name, "#2");
  EXPECT_EQ(shaper.state, ServiceState::starting);
  EXPECT_EQ(shaper.restarts, 1);
  EXPECT_EQ(shaper.job->attempt, 2);

  const ServiceStatus& web = status.services[2];
  EXPECT_EQ(web.state, ServiceState::failed);
  EXPECT_EQ(describe_service_state(web, now), "failed: timed out (killed by TERM)");
}

TEST_F(ServiceStatusView, AServiceStoppedByTheRunnerIsStopped) {
  CampaignJob job;
  job.service = "dht";
  job.outcome = JobOutcome::failed;
  job.signal = "TERM";
  job.cancelled = true;  // torn down at the run's end
  EXPECT_EQ(service_attempt_state(job), ServiceState::stopped);
  job.cancelled = false;  // killed by someone else
  EXPECT_EQ(service_attempt_state(job), ServiceState::failed);
  job.outcome = JobOutcome::succeeded;  // its cancel: command ended it well
  EXPECT_EQ(service_attempt_state(job), ServiceState::stopped);
  job.outcome = JobOutcome::unknown;  // the runner died
  EXPECT_EQ(service_attempt_state(job), ServiceState::unknown);
}

TEST_F(ServiceStatusView, StatusTableShowsServicesAndTheirSlots) {
  std::string text = format_status(status, "q.runner", 120);
  EXPECT_NE(text.find("jobs: 1 done (1 succeeded, 0 failed) · 0 running"), std::string::npos)
      << text;
  EXPECT_NE(text.find("node01 gpu=0  service  #1"), std::string::npos) << text;
  EXPECT_NE(text.find("SERVICE  JOB  SLOT"), std::string::npos) << text;
  EXPECT_NE(text.find("dht      #1   node01 gpu=0  ready since 10:00:02 (1m 00s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("#2       #2   node01 gpu=1  starting for 56s"), std::string::npos) << text;
  EXPECT_NE(text.find("logs/4.log"), std::string::npos) << text;
  EXPECT_EQ(text.find("failed:"), text.find("failed: timed out")) << text;  // no job failed
}

TEST_F(ServiceStatusView, StatusJsonListsServices) {
  nlohmann::ordered_json j = status_json(status, "q.runner");
  EXPECT_EQ(j["jobs"]["running"], 0);
  ASSERT_EQ(j["services"].size(), 3u);
  EXPECT_EQ(j["services"][0]["name"], "dht");
  EXPECT_EQ(j["services"][0]["state"], "ready");
  EXPECT_EQ(j["services"][0]["ready_since"], "2024-05-01T10:00:02.000Z");
  EXPECT_EQ(j["services"][0]["ready_ms"], 60000);
  EXPECT_EQ(j["services"][0]["variables"]["dht.addr"], "10.0.0.1:31337");
  EXPECT_EQ(j["services"][0]["log"], "q.runner/logs/1.log");
  EXPECT_EQ(j["services"][1]["restarts"], 1);
  EXPECT_EQ(j["services"][1]["state"], "starting");
  EXPECT_EQ(j["services"][2]["state"], "failed");
  EXPECT_EQ(j["services"][2]["end"], "timed out (killed by TERM)");
}

TEST_F(ServiceStatusView, ReportHasAServicesSectionAndKeepsThemOutOfTheJobs) {
  HtmlReportOptions options;
  options.now = now;
  options.log_tail = [](const CampaignJob& job) { return "tail of #" + std::to_string(job.id); };
  std::string html = render_html_report(campaign, options);
  EXPECT_NE(html.find("<h2>Services (3)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"services\">"), std::string::npos);
  EXPECT_NE(html.find("ready since 10:00:02"), std::string::npos);
  // The failed service's log tail, and no job failure.
  EXPECT_NE(html.find("<details id=\"failure-4\" open>"), std::string::npos);
  EXPECT_NE(html.find("tail of #4"), std::string::npos);
  EXPECT_NE(html.find("<h2>Failures (0)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Jobs (1)</h2>"), std::string::npos);
  // Every attempt still has its bar, a service's marked as one.
  EXPECT_EQ(testing::count(html, "<rect class=\"job "), 5u);
  EXPECT_EQ(testing::count(html, " service\" data-job="), 4u);
}

}  // namespace
}  // namespace runner
