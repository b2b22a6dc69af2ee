// The live status line: its text at every width, the ETA, and how Console
// keeps it below job lines and messages on a terminal.
#include "runner/ui/status_line.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "support/pipe.h"
#include "support/pty.h"

namespace runner {
namespace {

using testing::Pipe;
using testing::Pty;

using std::chrono::milliseconds;
using namespace std::chrono_literals;

std::size_t columns(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

RunProgress busy_campaign() {
  RunProgress p;
  p.succeeded = 11;
  p.failed = 1;
  p.running = 4;
  p.queued = 24;
  p.busy_slots = 4;
  p.total_slots = 8;
  p.elapsed = milliseconds(302'000);
  p.eta = milliseconds(750'000);
  return p;
}

TEST(StatusLine, ShowsCountsSlotsElapsedAndEta) {
  EXPECT_EQ(format_status_line(busy_campaign(), 200, false),
            "[###.......] 12/40 done · 1 failed · 4 running · 24 queued · 4/8 slots busy · "
            "5m 02s · ETA 12m 30s");
}

TEST(StatusLine, LeavesOutWhatIsZeroOrUnknown) {
  RunProgress p;
  p.running = 2;
  p.total_slots = 2;
  p.busy_slots = 2;
  EXPECT_EQ(format_status_line(p, 200, false),
            "[..........] 0/2 done · 2 running · ? queued · 2/2 slots busy · 0s");
}

TEST(StatusLine, DropsTheLeastUsefulPartsToFitTheTerminal) {
  RunProgress p = busy_campaign();
  std::string full = format_status_line(p, 200, false);
  for (std::size_t width = 100; width >= 12; --width) {
    std::string line = format_status_line(p, width, false);
    EXPECT_LT(columns(line), width) << line;
    EXPECT_NE(line.find("12/40 done"), std::string::npos) << "width " << width << ": " << line;
  }
  std::string narrower = format_status_line(p, 80, false);
  EXPECT_EQ(narrower.find('['), std::string::npos) << "the bar goes first: " << narrower;
  EXPECT_EQ(narrower.find("5m 02s"), std::string::npos) << "then the elapsed time";
  EXPECT_NE(narrower.find("ETA 12m 30s"), std::string::npos) << narrower;
  std::string narrow = format_status_line(p, 40, false);
  EXPECT_EQ(narrow, "12/40 done · 1 failed · 4 running");
  EXPECT_EQ(format_status_line(p, 8, false), "12/40 d");
}

TEST(StatusLine, BroadcastCountsOneRunPerSlot) {
  RunProgress p;
  p.succeeded = 4;
  p.running = 4;
  p.queued = 2;
  p.runs_per_job = 4;
  p.busy_slots = 4;
  p.total_slots = 4;
  EXPECT_EQ(format_status_line(p, 200, false),
            "[##........] 4/16 done · 4 running · 2 queued · 4/4 slots busy · 0s");
}

TEST(StatusLine, PaintsFailuresRedWhenColouring) {
  std::string line = format_status_line(busy_campaign(), 200, true);
  EXPECT_NE(line.find("\x1b[1;31m1 failed\x1b[0m"), std::string::npos) << line;
  EXPECT_EQ(format_status_line(busy_campaign(), 200, false).find('\x1b'), std::string::npos);
}

TEST(StatusLine, ShortDurations) {
  EXPECT_EQ(format_short_duration(milliseconds(999)), "0s");
  EXPECT_EQ(format_short_duration(milliseconds(42'500)), "42s");
  EXPECT_EQ(format_short_duration(milliseconds(302'000)), "5m 02s");
  EXPECT_EQ(format_short_duration(milliseconds(3'725'000)), "1h 02m");
  EXPECT_EQ(format_short_duration(milliseconds(273'600'000)), "3d 04h");
}

TEST(StatusLine, EstimateNeedsAFinishedJobAndASlot) {
  EXPECT_EQ(estimate_remaining(std::nullopt, 10, {}, 4), std::nullopt);
  EXPECT_EQ(estimate_remaining(milliseconds(1000), 10, {}, 0), std::nullopt);
}

TEST(StatusLine, EstimateSpreadsQueuedWorkOverTheSlots) {
  // 8 queued jobs of 60s on 4 slots: 2 minutes.
  EXPECT_EQ(estimate_remaining(milliseconds(60'000), 8, {}, 4), milliseconds(120'000));
  // Two running jobs 20s and 50s in: 40s + 10s left, plus the queue.
  std::vector<RunningShare> running = {{milliseconds(20'000), 1}, {milliseconds(50'000), 1}};
  EXPECT_EQ(estimate_remaining(milliseconds(60'000), 8, running, 4),
            milliseconds((8 * 60'000 + 40'000 + 10'000) / 4));
  // A job past the mean counts as nearly done, never negative.
  EXPECT_EQ(estimate_remaining(milliseconds(60'000), 0, {{milliseconds(90'000), 1}}, 4),
            milliseconds(0));
}

TEST(StatusLine, EstimateIsNeverSoonerThanTheLongestRunningJob) {
  // One job 10s into a 100s mean on 8 idle slots still needs 90s.
  EXPECT_EQ(estimate_remaining(milliseconds(100'000), 0, {{milliseconds(10'000), 1}}, 8),
            milliseconds(90'000));
  // A two-slot job's own duration is half its slot-time.
  EXPECT_EQ(estimate_remaining(milliseconds(100'000), 0, {{milliseconds(10'000), 2}}, 8),
            milliseconds(40'000));
}

class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~EnvVar() { m_old ? setenv(m_name.c_str(), m_old->c_str(), 1) : unsetenv(m_name.c_str()); }

 private:
  std::string m_name;
  std::optional<std::string> m_old;
};

constexpr const char* k_erase = "\r\x1b[K";

// Each test runs with TERM=xterm and a 100-column pseudo-terminal at hand.
class StatusConsole : public ::testing::Test {
 protected:
  // Puts console() on the terminal, status line on. False when the test cannot
  // go on: it is then skipped (no pseudo-terminal here) or has failed.
  bool open_terminal_console() {
    if (!m_pty.ok()) {
      skip_without_terminal();
      return false;
    }
    m_console.emplace(m_pty.terminal_fd(), m_pty.terminal_fd(), ColorMode::never);
    bool enabled = m_console->enable_status();
    EXPECT_TRUE(enabled) << "a console on an xterm shows the status line";
    return enabled;
  }
  Pty& pty() { return m_pty; }
  Console& console() { return *m_console; }

 private:
  void skip_without_terminal() { GTEST_SKIP() << "no pseudo-terminal available"; }

  EnvVar m_term{"TERM", "xterm"};
  Pty m_pty{100, 30};
  std::optional<Console> m_console;
};

TEST_F(StatusConsole, NoStatusLineWithoutATerminal) {
  Pipe out, err;
  Console console(out.write_fd(), err.write_fd(), ColorMode::never);
  EXPECT_FALSE(console.enable_status());
  console.show_status("should not appear");
  console.info("hello");
  EXPECT_EQ(err.drain(), "runner: hello\n");
  EXPECT_EQ(out.drain(), "");
}

TEST_F(StatusConsole, NoStatusLineOnADumbTerminal) {
  EnvVar term("TERM", "dumb");
  if (!pty().ok()) GTEST_SKIP() << "no pseudo-terminal available";
  Console console(pty().terminal_fd(), pty().terminal_fd(), ColorMode::never);
  EXPECT_FALSE(console.enable_status());
}

TEST_F(StatusConsole, JobLinesGoAboveTheStatusLineInOneWrite) {
  if (!open_terminal_console()) return;
  EXPECT_EQ(console().status_width(), 100u);
  console().show_status("1/3 done");
  EXPECT_EQ(pty().read_all(), std::string(k_erase) + "1/3 done");
  console().show_status("1/3 done");
  EXPECT_EQ(pty().read_all(), "") << "an unchanged line is not drawn again";
  console().job_output(7, 0, "n gpu=0", OutputStream::out, "hello\nwor");
  EXPECT_EQ(pty().read_all(), std::string(k_erase) + "[n gpu=0] hello\n1/3 done");
  console().warn("careful");
  EXPECT_EQ(pty().read_all(), std::string(k_erase) + "runner: warning: careful\n1/3 done");
  console().job_finished(7);
  EXPECT_EQ(pty().read_all(), std::string(k_erase) + "[n gpu=0] wor\n1/3 done");
  console().clear_status();
  EXPECT_EQ(pty().read_all(), k_erase);
  console().info("after");
  EXPECT_EQ(pty().read_all(), "runner: after\n") << "a cleared line stays away";
}

TEST_F(StatusConsole, StatusOnStderrWhenStdoutIsPiped) {
  if (!pty().ok()) GTEST_SKIP() << "no pseudo-terminal available";
  Pipe out;
  Console console(out.write_fd(), pty().terminal_fd(), ColorMode::never);
  ASSERT_TRUE(console.enable_status());
  console.show_status("busy");
  console.job_output(1, 0, "n", OutputStream::out, "to the pipe\n");
  console.flush();
  EXPECT_EQ(out.drain(), "[n] to the pipe\n") << "piped output never carries the status line";
  console.info("message");
  EXPECT_EQ(pty().read_all(), std::string(k_erase) + "busy" + k_erase + "runner: message\nbusy");
}

TEST_F(StatusConsole, StatusLineFollowsTheRunAndRedrawsAtABoundedRate) {
  if (!open_terminal_console()) return;
  int counted = 0;
  std::size_t in_queue = 5;
  auto t0 = Clock::now();
  StatusLine status(
      console(), 2, 1,
      [&]() -> std::optional<std::size_t> {
        ++counted;
        return in_queue;
      },
      t0);

  status.step(t0);
  EXPECT_EQ(pty().read_all(), std::string(k_erase) +
                                  "[..........] 0/5 done · 0 running · 5 queued · "
                                  "0/2 slots busy · 0s");
  EXPECT_EQ(counted, 1);

  in_queue = 3;
  status.job_started(1, 1, t0);
  status.job_started(2, 1, t0);
  status.step(t0 + 100ms);
  EXPECT_EQ(pty().read_all(), "") << "at most four redraws a second";
  ASSERT_TRUE(status.deadline().has_value());
  EXPECT_EQ(*status.deadline(), t0 + 250ms);

  status.job_finished(1, true, 10s);
  status.step(t0 + 10s);
  EXPECT_EQ(pty().read_all(), std::string(k_erase) +
                                  "[##........] 1/5 done · 1 running · 3 queued · "
                                  "1/2 slots busy · 10s · ETA 15s");
  status.job_finished(2, false, 10s);
  EXPECT_EQ(status.progress(t0 + 10s).failed, 1u);
  EXPECT_EQ(status.progress(t0 + 10s).busy_slots, 0u);

  status.host_down("node02", 1);
  status.host_down("node02", 1);  // said again while it reconnects
  EXPECT_EQ(status.progress(t0 + 10s).hosts_down, 1u);
  // Three queued jobs of 10s on the one slot left.
  EXPECT_EQ(status.progress(t0 + 10s).eta, milliseconds(30'000));
  status.host_up("node02");
  EXPECT_EQ(status.progress(t0 + 10s).hosts_down, 0u);
  EXPECT_EQ(status.progress(t0 + 10s).eta, milliseconds(15'000));

  status.finish();
  EXPECT_EQ(pty().read_all(), k_erase);
  EXPECT_EQ(status.deadline(), std::nullopt);
  status.step(t0 + 20s);
  EXPECT_EQ(pty().read_all(), "");
}

TEST_F(StatusConsole, QueueIsCountedAtMostOnceASecondAndOnlyWhenItMayHaveChanged) {
  if (!open_terminal_console()) return;
  int counted = 0;
  auto t0 = Clock::now();
  StatusLine status(
      console(), 1, 1,
      [&]() -> std::optional<std::size_t> {
        ++counted;
        return 4;
      },
      t0);
  status.step(t0);
  status.step(t0 + 2s);
  EXPECT_EQ(counted, 1) << "nothing changed";
  status.queue_changed();
  status.step(t0 + 2s);
  EXPECT_EQ(counted, 2);
  status.queue_changed();
  status.step(t0 + 2500ms);
  EXPECT_EQ(counted, 2) << "too soon";
  status.step(t0 + 3s);
  EXPECT_EQ(counted, 3);
  // Between counts a started job leaves the queue at once.
  status.job_started(1, 1, t0 + 3s);
  EXPECT_EQ(status.progress(t0 + 3s).queued, 3u);
}

TEST_F(StatusConsole, AJobRunAgainIsQueuedNotDone) {
  if (!open_terminal_console()) return;
  auto t0 = Clock::now();
  StatusLine status(
      console(), 2, 1, [] { return std::optional<std::size_t>(0); }, t0);
  status.step(t0);
  status.job_started(1, 1, t0);
  status.job_finished(1, false, 5s, /*runs_again=*/true);
  RunProgress p = status.progress(t0 + 5s);
  EXPECT_EQ(p.failed, 0u);
  EXPECT_EQ(p.running, 0u);
  EXPECT_EQ(p.queued, 1u);
  status.job_started(1, 1, t0 + 6s);
  p = status.progress(t0 + 6s);
  EXPECT_EQ(p.queued, 0u);
  EXPECT_EQ(p.running, 1u);
  status.job_finished(1, true, 5s);
  EXPECT_EQ(status.progress(t0 + 11s).succeeded, 1u);
}

TEST_F(StatusConsole, ABroadcastStepTakesOneJobFromTheQueue) {
  if (!open_terminal_console()) return;
  auto t0 = Clock::now();
  StatusLine status(
      console(), 3, 3, [] { return std::optional<std::size_t>(2); }, t0);
  status.step(t0);
  for (JobId run = 1; run <= 3; ++run) status.job_started(run, 1, t0);
  RunProgress p = status.progress(t0);
  EXPECT_EQ(p.queued, 1u);
  EXPECT_EQ(p.runs_per_job, 3u);
  EXPECT_NE(format_status_line(p, 200, false).find("0/6 done · 3 running · 1 queued"),
            std::string::npos);
}

}  // namespace
}  // namespace runner
