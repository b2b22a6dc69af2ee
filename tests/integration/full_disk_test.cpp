// A full disk under a running runner, for real: the state directory is a
// small tmpfs that the test fills while jobs run and frees again. Every
// failed write is said, no job starts while the journal cannot be written,
// no record is torn, and every log is whole or named as incomplete.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "support/process.h"
#include "support/small_tmpfs.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;

constexpr int k_jobs = 30;
constexpr int k_lines = 300;

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What job <<i>> prints.
std::string expected_output(int i) {
  std::string text;
  for (int n = 1; n <= k_lines; ++n)
    text += "line " + std::to_string(i) + " " + std::to_string(n) + "\n";
  return text;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// When the runner's messages said the journal could not be written: from
// the poll that first showed a failure to the last poll before the message
// that it can be written again (so each window lies inside the real one).
class JournalOutages {
 public:
  void observe(const std::string& err) {
    long long now = now_ns();
    std::size_t fail = err.rfind("cannot write to the journal");
    std::size_t back = err.rfind("the journal can be written again");
    bool recovered_since = back != std::string::npos && back >= m_seen;
    if (m_since && recovered_since) {
      m_windows.emplace_back(*m_since, m_last_poll);
      m_since.reset();
    }
    bool failing_now = fail != std::string::npos && (back == std::string::npos || fail > back);
    if (failing_now && !m_since) m_since = now;
    m_seen = err.size();
    m_last_poll = now;
  }
  bool failing() const { return m_since.has_value(); }
  // Whether a job whose shell read the clock `at` was started in a window.
  // A job started just before a failure reads the clock a little after it
  // (the fork and exec of its shell): that much is allowed.
  bool during(long long at) const {
    constexpr long long k_shell_start_ns = 250'000'000;
    for (const auto& [from, to] : m_windows)
      if (at > from + k_shell_start_ns && at < to) return true;
    return m_since && at > *m_since + k_shell_start_ns && at < m_last_poll;
  }
  std::string describe() const {
    std::string text = "failing";
    for (const auto& [from, to] : m_windows)
      text += " " + std::to_string(from) + ".." + std::to_string(to);
    if (m_since) text += " " + std::to_string(*m_since) + "..";
    return text;
  }
  long long total_ns() const {
    long long total = 0;
    for (const auto& [from, to] : m_windows) total += to - from;
    return total;
  }

 private:
  std::vector<std::pair<long long, long long>> m_windows;
  std::optional<long long> m_since;
  long long m_last_poll = 0;
  std::size_t m_seen = 0;
};

TEST(FullDisk, WritesThatFailAreSaidJobsWaitForTheJournalAndNothingIsTorn) {
  TempDir dir;
  testing::SmallTmpfs fs(dir.file("state"), "2m");
  RUNNER_REQUIRE_TMPFS(fs);
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  std::string starts = dir.file("starts");
  std::string list;
  for (int i = 0; i < k_jobs; ++i) list += (i ? ", " : "") + std::to_string(i);
  dir.write("queue.yaml", "- command: echo <<i>> $(date +%s%N) >> " + starts +
                              "; sleep 0.25; printf 'line <<i>> %s\\n' $(seq 1 " +
                              std::to_string(k_lines) + ")\n  i: [" + list + "]\n");
  Process run(testing::runner_spec({"queue", "--state-dir", fs.path()}, dir.path()));
  testing::wait_until([&] { return count_of(dir.read("state/journal.jsonl"), "job_end") >= 4; },
                      20s);
  ASSERT_GE(count_of(dir.read("state/journal.jsonl"), "job_end"), 4u) << run.peek_err();

  ASSERT_TRUE(fs.fill());
  JournalOutages outages;
  auto watch_until = [&](const std::function<bool()>& done, std::chrono::milliseconds limit) {
    auto give_up = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      outages.observe(run.peek_err());
      std::this_thread::sleep_for(5ms);
    }
    outages.observe(run.peek_err());
  };
  watch_until([&] { return outages.failing(); }, 20s);
  ASSERT_TRUE(outages.failing()) << "the journal failure is not said:\n" << run.peek_err();
  watch_until([] { return false; }, 2s);  // jobs under way end; none may start
  fs.free_space();
  watch_until([&] { return run.peek_err().find("wall time") != std::string::npos; }, 30s);
  ProcessResult r = run.wait();
  EXPECT_NE(r.err.find("the journal can be written again"), std::string::npos) << r.err;
  EXPECT_GE(outages.total_ns(), 1'000'000'000) << "the journal was never seen failing for long";

  // No job started while the journal could not be written, and every job ran.
  std::istringstream start_lines(dir.read("starts"));
  std::set<int> started;
  for (int i; start_lines >> i;) {
    long long at = 0;
    start_lines >> at;
    started.insert(i);
    EXPECT_FALSE(outages.during(at)) << "job " << i << " started while the journal failed, at "
                                     << at << "; " << outages.describe() << "\n"
                                     << r.err;
  }
  EXPECT_EQ(started.size(), std::size_t{k_jobs});

  // The journal parses line by line; no record is glued to another.
  std::istringstream lines(dir.read("state/journal.jsonl"));
  std::map<std::uint64_t, int> index_of;  // job id -> <<i>>
  std::map<std::uint64_t, bool> succeeded;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_EQ(count_of(line, "{\"event\""), 1u) << line;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(record.is_object()) << line;
    if (record["event"] == "job_start")
      index_of[record["job"]] = std::stoi(record["params"]["i"].get<std::string>());
    if (record["event"] == "job_end") succeeded[record["job"]] = record["exit"] == 0;
  }
  EXPECT_EQ(index_of.size(), std::size_t{k_jobs}) << r.err;
  EXPECT_EQ(succeeded.size(), std::size_t{k_jobs}) << r.err;

  // Every log is whole, or the summary names it as incomplete.
  std::size_t section = r.err.find("incomplete job logs");
  std::string named = section == std::string::npos ? "" : r.err.substr(section);
  int incomplete = 0;
  for (const auto& [job, i] : index_of) {
    std::string log = dir.read("state/logs/" + std::to_string(job) + ".log");
    if (log == expected_output(i)) continue;
    ++incomplete;
    EXPECT_NE(named.find("#" + std::to_string(job) + " "), std::string::npos)
        << "job #" << job << " has a cut log that the summary does not name:\n"
        << r.err;
  }
  if (incomplete > 0) {
    EXPECT_EQ(r.status, 1) << "logs were lost, yet the run succeeded";
  }
  std::cerr << "full disk: " << incomplete << " incomplete logs; exit " << r.status << "\n";
}

}  // namespace
}  // namespace runner
