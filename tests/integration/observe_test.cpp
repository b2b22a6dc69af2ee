// Seeing a campaign with the real binary on local slots: the live status
// line in a pseudo-terminal, `runner status` and `runner log --follow`
// against a live run, `--dry-run`, the end-of-run summary, and the HTML
// report rendered by headless Chromium.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "support/headless_chromium.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::count;

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;

// What a terminal shows after `raw`: committed lines, and the line the
// cursor is on. Understands the carriage return, line feed and "erase to
// the end of the line"; skips other escape sequences.
struct Screen {
  std::vector<std::string> lines;
  std::string current;
};

Screen render_terminal(const std::string& raw) {
  Screen screen;
  std::size_t column = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\r') {
      column = 0;
    } else if (c == '\n') {
      screen.lines.push_back(screen.current);
      screen.current.clear();
      column = 0;
    } else if (c == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
      std::size_t end = raw.find_first_of("ABCDEFGHJKSTfmnsu", i + 2);
      if (end == std::string::npos) break;
      if (raw[end] == 'K') screen.current.resize(std::min(column, screen.current.size()));
      i = end;
    } else {
      if (column < screen.current.size()) {
        screen.current[column] = c;
      } else {
        screen.current.push_back(c);
      }
      ++column;
    }
  }
  return screen;
}

// Runs `args` with stdin, stdout and stderr on a new pseudo-terminal of
// `columns` columns; returns everything written to it and the exit status.
std::pair<std::string, int> run_in_terminal(std::vector<std::string> args, const std::string& cwd,
                                            std::map<std::string, std::string> env,
                                            unsigned short columns = 120) {
  winsize size{};
  size.ws_col = columns;
  size.ws_row = 40;
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) return {"", -1};
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    for (const auto& [key, value] : env) {
      if (value.empty()) {
        unsetenv(key.c_str());
      } else {
        setenv(key.c_str(), value.c_str(), 1);
      }
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string output;
  auto give_up = std::chrono::steady_clock::now() + 60s;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < give_up) {
    pollfd pfd{master, POLLIN, 0};
    if (::poll(&pfd, 1, 100) > 0) {
      ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n <= 0) break;  // EIO: the terminal's last user is gone
      output.append(buffer, static_cast<std::size_t>(n));
    }
  }
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  ::close(master);
  return {output, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

struct Observe : ::testing::Test {
  TempDir dir;

  void SetUp() override { dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0, 1]\n"); }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
  std::unique_ptr<Process> start(std::vector<std::string> args) {
    return std::make_unique<Process>(testing::runner_spec(std::move(args), dir.path()));
  }
  // `runner status --json`, polled until `ready` says yes (or 20s pass).
  nlohmann::json status_when(const std::function<bool(const nlohmann::json&)>& ready) {
    nlohmann::json last;
    auto give_up = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < give_up) {
      ProcessResult r = runner({"status", "--json"});
      if (r.status == 0) {
        last = nlohmann::json::parse(r.out, nullptr, false);
        if (ready(last)) return last;
      }
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "status never got there; last: " << last.dump();
    return last;
  }
  void release_jobs() { dir.write("go", ""); }
};

// A job that waits for the test to create the file `go`.
constexpr const char* k_gated = "while [ ! -e go ]; do sleep 0.02; done";

TEST_F(Observe, OnAnEightyColumnTerminalLongLinesAreCutAndEachPieceCarriesItsSlot) {
  // As Pegasus' own test of long lines (tests/queue_long_lines.yaml).
  std::string long_line =
      "VERY LONG LINE This is an extremely long line from localhost that contains a lot of "
      "information and should definitely exceed the terminal width causing wrapping behavior to "
      "be tested. It includes details like model_id meta-llama-Llama-3.1-70B-Instruct";
  dir.write("long.txt", long_line + "\n");
  dir.write("hosts.yaml", "- localhost\n");
  dir.write("queue.yaml", "- echo \"SHORT LINE from {{ hostname }}\"\n- cat long.txt\n");
  auto [raw, status] = run_in_terminal({RUNNER_BINARY, "queue"}, dir.path(),
                                       {{"TERM", "xterm"}, {"CI", "true"}, {"NO_COLOR", "1"}}, 80);
  ASSERT_EQ(status, 0) << raw;
  Screen screen = render_terminal(raw);
  std::string joined;
  int pieces = 0;
  for (const std::string& line : screen.lines) {
    if (line.rfind("[localhost] ", 0) != 0) continue;
    EXPECT_LE(line.size(), 80u) << line;
    if (testing::is_job_note(line)) continue;
    if (line == "[localhost] SHORT LINE from localhost") continue;
    joined += line.substr(12);
    ++pieces;
  }
  EXPECT_EQ(joined, long_line) << raw;
  EXPECT_EQ(pieces, 4) << raw;  // 251 characters, 68 beside the prefix
}

TEST_F(Observe, StatusLineStaysBelowTheJobOutputInATerminal) {
  dir.write("queue.yaml",
            "- command: sleep 0.6; echo job <<i>> done on <<gpu>>\n"
            "  i: [1, 2, 3]\n");
  auto [raw, status] =
      run_in_terminal({RUNNER_BINARY, "queue"}, dir.path(),
                      {{"TERM", "xterm"}, {"CI", ""}, {"NO_COLOR", "1"}, {"SSH_AUTH_SOCK", ""}});
  ASSERT_EQ(status, 0) << raw;
  // Drawn while jobs ran, and erased before each line was written.
  EXPECT_NE(raw.find("2 running · 1 queued · 2/2 slots busy"), std::string::npos) << raw;
  EXPECT_NE(raw.find("\r\x1b[K[localhost gpu="), std::string::npos) << raw;
  EXPECT_NE(raw.find("/3 done"), std::string::npos) << raw;

  Screen screen = render_terminal(raw);
  EXPECT_EQ(screen.current, "") << "the status line is gone at the end";
  std::set<std::string> job_lines;
  for (const std::string& line : screen.lines) {
    EXPECT_EQ(line.find("/2 slots busy"), std::string::npos) << "status mixed into: " << line;
    if (line.rfind("[localhost", 0) == 0 && !testing::is_job_note(line)) job_lines.insert(line);
  }
  std::regex job_line(R"(\[localhost gpu=([01])\] job [123] done on \1)");
  EXPECT_EQ(job_lines.size(), 3u);
  for (const std::string& line : job_lines) EXPECT_TRUE(std::regex_match(line, job_line)) << line;
  EXPECT_TRUE(std::any_of(screen.lines.begin(), screen.lines.end(), [](const std::string& line) {
    return line.rfind("runner: 3 jobs: 3 succeeded, 0 failed; wall time ", 0) == 0;
  })) << raw;
}

TEST_F(Observe, NoStatusLineWhenAskedNotToOrInCi) {
  dir.write("queue.yaml", "- echo one\n");
  std::map<std::string, std::string> env = {{"TERM", "xterm"}, {"CI", ""}, {"NO_COLOR", "1"}};
  auto [quiet_raw, quiet_status] =
      run_in_terminal({RUNNER_BINARY, "queue", "--quiet"}, dir.path(), env);
  EXPECT_EQ(quiet_status, 0);
  EXPECT_EQ(quiet_raw.find("/2 slots busy"), std::string::npos) << quiet_raw;
  EXPECT_EQ(quiet_raw.find("] one"), std::string::npos) << "--quiet prints no job output";
  EXPECT_NE(quiet_raw.find("runner: 1 job: 1 succeeded"), std::string::npos) << quiet_raw;

  dir.write("queue.yaml", "- echo two\n");
  auto [plain_raw, plain_status] =
      run_in_terminal({RUNNER_BINARY, "queue", "--no-status"}, dir.path(), env);
  EXPECT_EQ(plain_status, 0);
  EXPECT_EQ(plain_raw.find("/2 slots busy"), std::string::npos) << plain_raw;
  EXPECT_NE(plain_raw.find("] two"), std::string::npos) << plain_raw;

  dir.write("queue.yaml", "- echo three\n");
  env["CI"] = "true";
  auto [ci_raw, ci_status] = run_in_terminal({RUNNER_BINARY, "queue"}, dir.path(), env);
  EXPECT_EQ(ci_status, 0);
  EXPECT_EQ(ci_raw.find("/2 slots busy"), std::string::npos) << ci_raw;

  dir.write("queue.yaml", "- echo four\n");
  env["CI"] = "";
  env["TERM"] = "dumb";
  auto [dumb_raw, dumb_status] = run_in_terminal({RUNNER_BINARY, "queue"}, dir.path(), env);
  EXPECT_EQ(dumb_status, 0);
  EXPECT_EQ(dumb_raw.find("/2 slots busy"), std::string::npos) << dumb_raw;
}

TEST_F(Observe, StatusOfALiveRunAndThenOfTheFinishedOne) {
  dir.write("queue.yaml", std::string("- command: ") + k_gated + "; echo <<i>>\n  i: [1, 2, 3]\n");
  auto run = start({"queue"});
  nlohmann::json live = status_when(
      [](const nlohmann::json& j) { return j.is_object() && j["jobs"]["running"] == 2; });
  EXPECT_EQ(live["run"]["state"], "running");
  EXPECT_EQ(live["run"]["mode"], "queue");
  EXPECT_EQ(live["run"]["pid"], run->pid());
  EXPECT_EQ(live["jobs"]["queued"], 1);
  EXPECT_EQ(live["jobs"]["done"], 0);
  EXPECT_EQ(live["busy_slots"], 2);
  EXPECT_EQ(live["eta_ms"], nullptr) << "no job finished yet";
  ASSERT_EQ(live["slots"].size(), 2u);
  std::set<int> running_jobs;
  for (const auto& slot : live["slots"]) {
    EXPECT_EQ(slot["state"], "running");
    EXPECT_EQ(slot["host"], "localhost");
    running_jobs.insert(slot["job"].get<int>());
  }
  EXPECT_EQ(running_jobs, (std::set<int>{1, 2}));
  EXPECT_EQ(live["slots"][1]["params"]["gpu"], "1");
  ASSERT_EQ(live["running"].size(), 2u);
  EXPECT_NE(live["running"][0]["command"].get<std::string>().find("echo 1"), std::string::npos);
  EXPECT_EQ(live["running"][0]["log"], "queue.runner/logs/1.log");

  ProcessResult table = runner({"status"});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("queue run "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("running for"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("· 2 running · 1 queued"), std::string::npos) << table.out;
  EXPECT_TRUE(std::regex_search(table.out, std::regex(R"(\nlocalhost gpu=0  running  #[12] )")))
      << table.out;

  release_jobs();
  ProcessResult r = run->wait();
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json done = nlohmann::json::parse(runner({"status", "--json"}).out);
  EXPECT_EQ(done["run"]["state"], "finished");
  EXPECT_NE(done["run"]["ended"], nullptr);
  EXPECT_EQ(done["jobs"]["done"], 3);
  EXPECT_EQ(done["jobs"]["succeeded"], 3);
  EXPECT_EQ(done["jobs"]["running"], 0);
  EXPECT_EQ(done["jobs"]["queued"], 0);
  EXPECT_EQ(done["slots"][0]["state"], "idle");
}

TEST_F(Observe, WatchEndsWithTheRun) {
  dir.write("queue.yaml", std::string("- ") + k_gated + "\n");
  auto run = start({"queue"});
  status_when([](const nlohmann::json& j) { return j.is_object() && j["jobs"]["running"] == 1; });
  auto watch = start({"status", "--watch", "--json", "--interval", "0.1"});
  ASSERT_TRUE(watch->wait_for_output("\"running\":1", 10s)) << watch->peek_out();
  release_jobs();
  ProcessResult watched = watch->wait();
  EXPECT_EQ(watched.status, 0) << watched.err;
  EXPECT_GE(count(watched.out, "\n"), 2) << "one JSON line per refresh";
  std::string last = watched.out.substr(watched.out.rfind('\n', watched.out.size() - 2) + 1);
  EXPECT_EQ(nlohmann::json::parse(last)["run"]["state"], "finished") << watched.out;
  EXPECT_EQ(run->wait().status, 0);
}

TEST_F(Observe, LogFollowsARunningJobToItsEnd) {
  dir.write("queue.yaml", std::string("- echo first; ") + k_gated + "; echo second; exit 3\n");
  auto run = start({"queue"});
  ASSERT_TRUE(run->wait_for_output("] first", 10s)) << run->peek_err();
  auto follow = start({"log", "--follow", "#1"});
  ASSERT_TRUE(follow->wait_for_output("first\n", 10s)) << follow->peek_err();
  EXPECT_EQ(follow->peek_out(), "first\n");
  release_jobs();
  ProcessResult followed = follow->wait();
  EXPECT_EQ(followed.status, 0) << followed.err;
  EXPECT_EQ(followed.out, "first\nsecond\n");
  EXPECT_NE(followed.err.find("runner: #1 [localhost gpu=0] exit 3 after"), std::string::npos)
      << followed.err;
  EXPECT_EQ(run->wait().status, 1);

  ProcessResult saved = runner({"log", "1"});
  EXPECT_EQ(saved.status, 0);
  EXPECT_EQ(saved.out, "first\nsecond\n");
  ProcessResult unknown = runner({"log", "42"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no job #42"), std::string::npos) << unknown.err;
  EXPECT_EQ(runner({"log", "abc"}).status, 2);
}

TEST_F(Observe, LogSaysWhichLineOfTheJournalItSkipped) {
  dir.write("queue.yaml", "- echo only\n");
  ASSERT_EQ(runner({"queue"}).status, 0);
  // A record cut short by a crash, as the second line.
  std::string journal = dir.read("queue.runner/journal.jsonl");
  std::size_t first_end = journal.find('\n') + 1;
  dir.write("queue.runner/journal.jsonl",
            journal.substr(0, first_end) + "{\"event\":\"job_st\n" + journal.substr(first_end));
  for (std::vector<std::string> args :
       {std::vector<std::string>{"log", "1"}, std::vector<std::string>{"log", "--follow", "1"}}) {
    ProcessResult r = runner(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "only\n");
    EXPECT_NE(r.err.find("journal.jsonl line 2: not a whole record"), std::string::npos) << r.err;
  }
}

TEST_F(Observe, DryRunPrintsEveryJobAndChangesNothing) {
  std::string queue =
      "# a campaign\n"
      "- command: python bench.py --model <<model>> --batch <<batch>> --gpu <<gpu>>\n"
      "  model: [llama, vicuna]\n"
      "  batch: [1, 2]\n"
      "- command: torchrun train.py --gpus <<gpu>>\n"
      "  slots: 2\n";
  dir.write("queue.yaml", queue);
  auto before = std::filesystem::last_write_time(dir.file("queue.yaml"));
  ProcessResult r = runner({"queue", "--dry-run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "1 [localhost gpu=0] python bench.py --model llama --batch 1 --gpu 0\n"
            "2 [localhost gpu=1] python bench.py --model llama --batch 2 --gpu 1\n"
            "3 [localhost gpu=0] python bench.py --model vicuna --batch 1 --gpu 0\n"
            "4 [localhost gpu=1] python bench.py --model vicuna --batch 2 --gpu 1\n"
            "5 [localhost gpu=0,1] torchrun train.py --gpus 0,1\n");
  EXPECT_NE(r.err.find("dry run of queue.yaml: 5 jobs on 2 slots; 2 start at once"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), queue);
  EXPECT_EQ(std::filesystem::last_write_time(dir.file("queue.yaml")), before);
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    files.insert(entry.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"hosts.yaml", "queue.yaml"}))
      << "no state directory, no consumed.yaml, no lock";

  ProcessResult b = runner({"broadcast", "-n", "--queue-file", "queue.yaml"});
  EXPECT_EQ(b.status, 2) << "a two-slot job cannot be broadcast";
  dir.write("setup.yaml", "- docker pull image\n- docker run --gpus <<gpu>> image\n");
  b = runner({"broadcast", "--dry-run", "--queue-file", "setup.yaml"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(b.out,
            "1 [localhost gpu=0] docker pull image\n"
            "1 [localhost gpu=1] docker pull image\n"
            "2 [localhost gpu=0] docker run --gpus 0 image\n"
            "2 [localhost gpu=1] docker run --gpus 1 image\n");
  EXPECT_EQ(dir.read("setup.yaml"), "- docker pull image\n- docker run --gpus <<gpu>> image\n");
}

TEST_F(Observe, DryRunReportsAnUndefinedVariableBeforeAnything) {
  dir.write("queue.yaml", "- echo <<nope>>\n");
  ProcessResult r = runner({"queue", "--dry-run"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.runner")));
}

TEST_F(Observe, DryRunOfAMillionJobProductFitsInTheMemoryOfARealRun) {
  std::string values = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]";
  dir.write("queue.yaml",
            "- command: run <<a>> <<b>> <<c>> <<d>> <<e>> on <<gpu>>\n"
            "  a: " +
                values + "\n  b: " + values + "\n  c: " + values + "\n  d: " + values +
                "\n  e: " + values + "\n");
  // 1 GiB of address space, the plan to a file.
  testing::ProcessSpec spec = testing::runner_spec({"queue", "--dry-run"}, dir.path());
  std::string runner_binary = spec.args.front();
  spec.args = {"/bin/sh", "-c", "ulimit -v 1048576 && exec \"$0\" queue --dry-run >plan.txt",
               runner_binary};
  spec.timeout = 120s;
  ProcessResult r = testing::run_process(spec);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("dry run of queue.yaml: 1048576 jobs on 2 slots; 2 start at once"),
            std::string::npos)
      << r.err;
  std::string plan = dir.read("plan.txt");
  EXPECT_EQ(count(plan, "\n"), 1048576);
  EXPECT_EQ(plan.substr(0, plan.find('\n') + 1), "      1 [localhost gpu=0] run 0 0 0 0 0 on 0\n");
  std::string last = "1048576 [localhost gpu=1] run 15 15 15 15 15 on 1\n";
  EXPECT_TRUE(plan.size() >= last.size() &&
              plan.compare(plan.size() - last.size(), last.size(), last) == 0)
      << plan.substr(plan.size() - std::min<std::size_t>(plan.size(), 200));
}

TEST_F(Observe, SummarySaysHowBusySlotsWereWhatWasSlowAndWhatFailed) {
  // The failing job lasts long enough to have a duration to show (one
  // that ends within a millisecond shows none).
  dir.write("queue.yaml", "- sleep 0.3\n- sleep 0.01; echo oops >&2; exit 5\n- true\n");
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("runner: 3 jobs: 2 succeeded, 1 failed; wall time"), std::string::npos)
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(runner: slots busy \d+% of the time)")))
      << r.err;
  EXPECT_TRUE(
      std::regex_search(r.err, std::regex(R"(\n  localhost gpu=0 +[0-9.]+m?s +\d+%  \d jobs?\n)")))
      << r.err;
  EXPECT_NE(r.err.find("runner: slowest jobs\n  #1 [localhost gpu=0] "), std::string::npos)
      << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(runner: failed jobs\n  #2 \[localhost gpu=1\] exit 5 after \S+ )"
                        R"(— log: queue.runner/logs/2.log\n)")))
      << r.err;
}

TEST_F(Observe, StatusWithoutARunSaysHowToFindOne) {
  ProcessResult r = runner({"status"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no run is recorded"), std::string::npos) << r.err;
  EXPECT_EQ(runner({"report"}).status, 2);
}

TEST_F(Observe, ReportRendersABarForEveryJobInHeadlessChromium) {
  std::string chromium = testing::find_chromium();
  RUNNER_REQUIRE_CHROMIUM(chromium);
  dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0, 1, 2]\n");
  dir.write("queue.yaml",
            "- command: sleep 0.<<t>>; echo model <<t>>\n"
            "  t: [1, 4, 2, 3, 1]\n"
            "- echo 'CUDA out of memory <on purpose>' >&2; exit 2\n"
            "- command: sleep 0.2\n"
            "  slots: 2\n"
            "- sleep 0.1\n");
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 1) << run.err;
  ProcessResult report = runner({"report", "-o", "report.html"});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_EQ(report.out, "report.html\n");
  std::string page = dir.read("report.html");
  EXPECT_EQ(page.find("http"), std::string::npos) << "nothing is fetched";

  auto chrome = [&](std::vector<std::string> extra, const std::string& url) {
    return testing::headless_chromium(chromium, dir, extra, url);
  };
  std::string url = "file://" + dir.file("report.html");
  ProcessResult dom = chrome({"--dump-dom"}, url + "#sort=duration");
  ASSERT_EQ(dom.status, 0) << dom.err;
  // Eight jobs, the two-slot one with a bar on each of its slots.
  EXPECT_EQ(count(dom.out, "<rect class=\"job "), 9) << dom.out.substr(0, 2000);
  std::set<std::string> bars;
  std::regex bar(R"re(<rect class="job (ok|failed)" data-job="(\d+)")re");
  for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), bar);
       it != std::sregex_iterator(); ++it)
    bars.insert((*it)[2]);
  EXPECT_EQ(bars, (std::set<std::string>{"1", "2", "3", "4", "5", "6", "7", "8"}));
  EXPECT_EQ(count(dom.out, "<rect class=\"job failed\""), 1);
  EXPECT_NE(dom.out.find("CUDA out of memory &lt;on purpose&gt;"), std::string::npos)
      << "the failure's log tail";
  // The script drew every job into the table, sorted by duration, slowest
  // first: the 0.4s job.
  std::size_t body = dom.out.find("<tbody>", dom.out.find("<table id=\"jobs\">"));
  ASSERT_NE(body, std::string::npos);
  std::string rows = dom.out.substr(body, dom.out.find("</tbody>", body) - body);
  EXPECT_EQ(count(rows, "<tr><td class=\"num\" data-v="), 8) << rows;
  std::smatch first_row;
  ASSERT_TRUE(
      std::regex_search(rows, first_row, std::regex(R"re(<td class="num" data-v="(\d+)">)re")));
  EXPECT_EQ(first_row[1], "2") << "job 2 sleeps longest";

  ProcessResult shot =
      chrome({"--window-size=1400,1200", "--screenshot=" + dir.file("report.png")}, url);
  ASSERT_EQ(shot.status, 0) << shot.err;
  std::string png = dir.read("report.png");
  EXPECT_GT(png.size(), 20'000u) << "a page with content, not a blank one";
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

}  // namespace
}  // namespace runner
