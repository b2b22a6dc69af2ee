// The SSH executor against real sshd processes on 127.0.0.1: jobs, output,
// exit statuses, signals, host keys, authentication, connection pooling and
// lost connections. Each test drives the executor with a small poll loop.
#include "runner/exec/ssh/ssh_executor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runner/exec/shell.h"
#include "support/loopback_port.h"
#include "support/process.h"
#include "support/ssh_agent.h"
#include "support/sshd.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::count;

using namespace std::chrono_literals;
using testing::Sshd;
using testing::SshdOptions;
using testing::TempDir;

// Everything an executor reported, in order.
class Recorder : public ExecutorEvents {
 public:
  void host_ready(int) override {
    ready = true;
    log.push_back("ready");
  }
  void host_failed(int, const Status& error) override {
    failure = error;
    log.push_back("failed");
  }
  void task_started(TaskId job, long pgid) override {
    pgids[job] = pgid;
    log.push_back("started " + std::to_string(job));
  }
  void task_output(TaskId job, OutputStream stream, std::string_view bytes) override {
    (stream == OutputStream::out ? out : err)[job].append(bytes);
    if (on_output) on_output(job, stream);
  }
  void task_exited(TaskId job, const JobExit& exit) override {
    exits[job] = exit;
    ++exit_reports[job];
    log.push_back("exited " + std::to_string(job));
  }
  void signal_failed(JobId job, int, const std::string& why) override {
    log.push_back("signal failed " + std::to_string(job) + ": " + why);
  }

  bool ready = false;
  std::optional<Status> failure;
  std::map<JobId, long> pgids;
  std::map<JobId, std::string> out;
  std::map<JobId, std::string> err;
  std::map<JobId, JobExit> exits;
  std::map<JobId, int> exit_reports;
  std::vector<std::string> log;
  std::function<void(JobId, OutputStream)> on_output;
};

// Steps several executors in one poll loop until `done` or a safety timeout.
bool run_all_until(const std::vector<Executor*>& executors, const std::function<bool()>& done,
                   std::chrono::milliseconds limit = 20s) {
  auto give_up = Clock::now() + limit;
  while (!done()) {
    Clock::time_point now = Clock::now();
    if (now >= give_up) return false;
    std::vector<pollfd> fds;
    Clock::time_point wake = give_up;
    for (Executor* executor : executors) {
      executor->poll_fds(fds);
      if (auto deadline = executor->deadline()) wake = std::min(wake, *deadline);
    }
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
    if (timeout < 0) timeout = 0;
    // Round up so a deadline a fraction of a millisecond away is not spun on.
    if (wake > now && timeout == 0) timeout = 1;
    poll(fds.data(), fds.size(), static_cast<int>(timeout));
    now = Clock::now();
    for (Executor* executor : executors) executor->step(now);
  }
  return true;
}

// Polls and steps the executor until `done` or a safety timeout.
bool run_until(Executor& executor, const std::function<bool()>& done,
               std::chrono::milliseconds limit = 20s) {
  return run_all_until({&executor}, done, limit);
}

// Steps `executor` until it reports ready or failed: success if ready.
::testing::AssertionResult becomes_ready(Executor& executor, Recorder& events) {
  if (!run_until(executor, [&] { return events.ready || events.failure; }))
    return ::testing::AssertionFailure() << "neither ready nor failed in time";
  if (!events.ready) return ::testing::AssertionFailure() << events.failure->message();
  return ::testing::AssertionSuccess();
}

// Keeps the loop running for a while with nothing to wait for.
void idle_for(Executor& executor, std::chrono::milliseconds duration) {
  run_until(
      executor, [] { return false; }, duration);
}

void generate_key(const std::string& path, const std::string& type,
                  const std::string& passphrase = "") {
  std::string command = "ssh-keygen -q -t " + type + " -N " + shell_quote(passphrase) +
                        " -C runner-test -f " + shell_quote(path) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class SshExecutorTest : public ::testing::Test {
 protected:
  // Starts an sshd in the test directory; the test must RUNNER_REQUIRE_SSHD.
  std::unique_ptr<Sshd> start_sshd(const SshdOptions& options = {},
                                   const std::string& name = "sshd") {
    return Sshd::start(m_dir.file(name), options);
  }

  // Options of an sshd whose log() shows what it logs at `level`.
  static SshdOptions logging(const std::string& level) {
    SshdOptions options;
    options.log_level = level;
    return options;
  }

  // Starts another sshd, named `name`, that accepts the client key of `first`.
  std::unique_ptr<Sshd> start_sshd_sharing_key(const Sshd& first, const std::string& name,
                                               SshdOptions options = {}) {
    options.client_key = first.client_key();
    return start_sshd(options, name);
  }

  // An ssh configuration of the test's own: ~/.ssh/config is never read.
  std::string empty_ssh_config() { return m_dir.write("empty_ssh_config", ""); }

  // A known_hosts file ("kh") that trusts these servers.
  std::string known_hosts_of(std::initializer_list<const Sshd*> servers) {
    std::string text;
    for (const Sshd* server : servers) text += server->known_hosts_line() + "\n";
    return m_dir.write("kh", text);
  }

  // A known_hosts line for `sshd`'s address with a key that is not its own.
  std::string other_host_key_line(const Sshd& sshd) {
    generate_key(m_dir.file("other_host_key"), "ed25519");
    std::istringstream other(read_text(m_dir.file("other_host_key.pub")));
    std::string type, blob;
    other >> type >> blob;
    return "[127.0.0.1]:" + std::to_string(sshd.port()) + " " + type + " " + blob + "\n";
  }

  // Options that trust `sshd` and log in with its client key, no agent.
  SshOptions options_for(const Sshd& sshd) {
    SshOptions options;
    options.config_file = empty_ssh_config();
    // Never a prompt on the terminal of whoever runs the tests.
    options.ask_passphrase = [](const std::string&) { return std::nullopt; };
    options.identity_files = {sshd.client_key()};
    options.known_hosts = m_dir.write("known_hosts", sshd.known_hosts_line() + "\n");
    options.use_agent = false;
    options.connect_timeout = 10s;
    return options;
  }

  // Options that trust no host and use no agent, for a port with no sshd.
  SshOptions options_trusting_nothing() {
    SshOptions options;
    options.config_file = empty_ssh_config();
    options.use_agent = false;
    options.known_hosts = m_dir.write("known_hosts", "");
    return options;
  }

  static HostAddress address_of(const Sshd& sshd) {
    HostAddress address;
    address.user = sshd.user();
    address.host = sshd.address();
    address.port = sshd.port();
    return address;
  }

  std::unique_ptr<Executor> connect(const Sshd& sshd, const SshOptions& options) {
    auto executor = make_ssh_executor(0, address_of(sshd), options, m_events);
    executor->connect();
    return executor;
  }

  // Connects and waits for host_ready.
  std::unique_ptr<Executor> ready_executor(const Sshd& sshd, const SshOptions& options) {
    auto executor = connect(sshd, options);
    bool settled = run_until(*executor, [&] { return m_events.ready || m_events.failure; });
    EXPECT_TRUE(settled);
    EXPECT_TRUE(m_events.ready) << (m_events.failure ? m_events.failure->message() : "timeout");
    return executor;
  }

  // Runs one job to its end.
  JobExit run_job(Executor& executor, const std::string& command, JobId job = 1) {
    executor.start_task(job, command);
    EXPECT_TRUE(run_until(executor, [&] { return m_events.exits.count(job) > 0; }));
    return m_events.exits[job];
  }

  // After host_failed: connects `executor` afresh and waits for it to be ready.
  ::testing::AssertionResult connects_again(Executor& executor) {
    m_events.ready = false;
    m_events.failure.reset();
    executor.connect();
    return becomes_ready(executor, m_events);
  }

  // Waits for an executor failure and returns it.
  Status failure_of(Executor& executor) {
    EXPECT_TRUE(run_until(executor, [&] { return m_events.failure || m_events.ready; }));
    EXPECT_FALSE(m_events.ready);
    return m_events.failure.value_or(Status{});
  }

  // Connects to 127.0.0.1:`port` and waits for the failure.
  Status failure_connecting_to(int port, const SshOptions& options) {
    HostAddress address;
    address.host = "127.0.0.1";
    address.port = port;
    auto executor = make_ssh_executor(0, address, options, m_events);
    executor->connect();
    return failure_of(*executor);
  }

  TempDir m_dir;
  Recorder m_events;
};

// Starts each test with an executor ready on one sshd with default options.
class ReadySshExecutorTest : public SshExecutorTest {
 protected:
  void SetUp() override {
    m_sshd = start_sshd();
    RUNNER_REQUIRE_SSHD(m_sshd);
    m_executor = ready_executor(*m_sshd, options_for(*m_sshd));
  }

  std::unique_ptr<Sshd> m_sshd;
  std::unique_ptr<Executor> m_executor;
};

TEST_F(ReadySshExecutorTest, RunsEchoAndReportsOutputAndExit) {
  JobExit exit = run_job(*m_executor, "echo hi");
  EXPECT_EQ(m_events.out[1], "hi\n");
  EXPECT_EQ(m_events.err[1], "");
  EXPECT_EQ(exit.code(), 0);
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_GT(m_events.pgids[1], 1);
  EXPECT_EQ(m_events.log, (std::vector<std::string>{"ready", "started 1", "exited 1"}));
}

TEST_F(ReadySshExecutorTest, ReportsExitCode) {
  JobExit exit = run_job(*m_executor, "exit 3");
  EXPECT_EQ(exit.code(), 3);
  EXPECT_EQ(exit.signal(), "");
  EXPECT_EQ(exit.error(), "");
  EXPECT_FALSE(exit.succeeded());
}

TEST_F(ReadySshExecutorTest, KeepsStderrSeparate) {
  run_job(*m_executor, "echo to-out; echo to-err >&2; echo more-out");
  EXPECT_EQ(m_events.out[1], "to-out\nmore-out\n");
  EXPECT_EQ(m_events.err[1], "to-err\n");
}

TEST_F(ReadySshExecutorTest, RunsNastyCommandExactlyAsWritten) {
  std::string command =
      "printf '%s|' 'single '\\''quoted'\\''' \"dollar \\$HOME\" 'back\\slash' \"tab\tx\"\n"
      "echo 'multi\nline'; echo \"arith $((6 * 7))\"; echo '`not run`' \"a\\\\b\"";
  JobExit exit = run_job(*m_executor, command);
  EXPECT_TRUE(exit.succeeded()) << exit.error() << m_events.err[1];
  EXPECT_EQ(m_events.out[1], testing::sh_output(command));
  EXPECT_NE(m_events.out[1].find("single 'quoted'|dollar $HOME|back\\slash|"), std::string::npos);
}

TEST_F(ReadySshExecutorTest, StreamsLargeOutputCompletely) {
  JobExit exit =
      run_job(*m_executor, "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo done >&2");
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_EQ(m_events.out[1].size(), 3000001u);
  EXPECT_EQ(m_events.out[1].find_first_not_of('x'), 3000000u);
  EXPECT_EQ(m_events.err[1], "done\n");
}

TEST_F(ReadySshExecutorTest, AFastWriterLeavesTheEventLoopBetweenSteps) {
  constexpr size_t k_total = 32u << 20;
  m_executor->start_task(1, "head -c " + std::to_string(k_total) + " /dev/zero");
  size_t most_in_one_step = 0;
  size_t before = 0;
  auto give_up = Clock::now() + 60s;
  while (!m_events.exits.count(1) && Clock::now() < give_up) {
    std::vector<pollfd> fds;
    m_executor->poll_fds(fds);
    std::optional<Clock::time_point> deadline = m_executor->deadline();
    int timeout = deadline && *deadline <= Clock::now() ? 0 : 100;
    poll(fds.data(), fds.size(), timeout);
    m_executor->step(Clock::now());
    most_in_one_step = std::max(most_in_one_step, m_events.out[1].size() - before);
    before = m_events.out[1].size();
  }
  ASSERT_TRUE(m_events.exits.count(1));
  EXPECT_EQ(m_events.out[1].size(), k_total);
  EXPECT_LE(most_in_one_step, 1u << 20) << "one step read this much of the stream";
}

TEST_F(ReadySshExecutorTest, ReportsPgidOfTheRemoteProcessGroup) {
  run_job(*m_executor, "ps -o pgid= $$");
  ASSERT_TRUE(m_events.pgids.count(1));
  EXPECT_EQ(std::stol(m_events.out[1]), m_events.pgids[1]);
}

TEST_F(SshExecutorTest, LoginShellNoiseIsNoJobsOutput) {
  // Start-up files of the login shell may print before its sh runs: that
  // is before the ready marker, so no job's.
  SshdOptions sshd_options;
  sshd_options.extra_config =
      "ForceCommand echo noise from startup; eval \"$SSH_ORIGINAL_COMMAND\"";
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto executor = ready_executor(*sshd, options_for(*sshd));
  std::vector<std::string> seen_at_stdout;
  m_events.on_output = [&](JobId job, OutputStream stream) {
    if (stream == OutputStream::out) seen_at_stdout.push_back(m_events.log.back());
  };
  JobExit exit = run_job(*executor, "echo job");
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_EQ(m_events.out[1], "job\n");
  EXPECT_GT(m_events.pgids[1], 1);
  ASSERT_FALSE(seen_at_stdout.empty());
  EXPECT_EQ(seen_at_stdout.front(), "started 1") << "output came before job_started";
}

TEST_F(SshExecutorTest, ManyJobsOverSeveralConnectionsWhenMaxSessionsIsSmall) {
  SshdOptions sshd_options;
  sshd_options.max_sessions = 3;
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto executor = ready_executor(*sshd, options_for(*sshd));
  constexpr int k_jobs = 20;
  for (JobId job = 1; job <= k_jobs; ++job) {
    // The client port in $SSH_CONNECTION names the job's connection.
    executor->start_task(job,
                          "echo job " + std::to_string(job) + " ${SSH_CONNECTION#* }; sleep 0.2");
  }
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.exits.size() == k_jobs; }))
      << m_events.exits.size() << " jobs ended";
  std::set<std::string> servers;
  for (JobId job = 1; job <= k_jobs; ++job) {
    EXPECT_TRUE(m_events.exits[job].succeeded()) << job << ": " << m_events.exits[job].error();
    std::istringstream words(m_events.out[job]);
    std::string word, number, server;
    words >> word >> number >> server;
    EXPECT_EQ(word + " " + number, "job " + std::to_string(job));
    servers.insert(server);
    EXPECT_EQ(m_events.exit_reports[job], 1);
  }
  EXPECT_GT(servers.size(), 1u) << "one connection cannot hold 20 jobs with MaxSessions 3";
  EXPECT_LE(servers.size(), 10u);
}

TEST_F(ReadySshExecutorTest, OneConnectionSufficesForFewJobs) {
  for (JobId job = 1; job <= 5; ++job)
    m_executor->start_task(job, "echo ${SSH_CONNECTION#* }; sleep 0.1");
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_events.exits.size() == 5; }));
  std::set<std::string> servers;
  for (JobId job = 1; job <= 5; ++job) servers.insert(m_events.out[job]);
  EXPECT_EQ(servers.size(), 1u);
}

TEST_F(ReadySshExecutorTest, SignalEndsJobAndItsChildren) {
  m_executor->start_task(1, "sleep 60 & echo $!; wait");
  ASSERT_TRUE(run_until(*m_executor, [&] {
    return m_events.pgids.count(1) && m_events.out[1].find('\n') != std::string::npos;
  }));
  pid_t child = std::stoi(m_events.out[1]);
  ASSERT_TRUE(testing::process_running(child));
  m_executor->signal_task(1, SIGTERM);
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_events.exits.count(1) > 0; }));
  EXPECT_EQ(m_events.exits[1].signal(), "TERM");
  EXPECT_FALSE(m_events.exits[1].succeeded());
  EXPECT_EQ(m_events.exits[1].error(), "");
  auto give_up = Clock::now() + 5s;
  while (testing::process_running(child) && Clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(testing::process_running(child)) << "the job's child survived";
  EXPECT_TRUE(testing::running_group_members(m_events.pgids[1]).empty());
}

TEST_F(SshExecutorTest, SignalReachesJobWhenItsConnectionIsFull) {
  SshdOptions sshd_options;
  sshd_options.max_sessions = 1;
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto executor = ready_executor(*sshd, options_for(*sshd));
  executor->start_task(1, "sleep 60");
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.pgids.count(1) > 0; }));
  executor->signal_task(1, SIGKILL);
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.exits.count(1) > 0; }));
  EXPECT_EQ(m_events.exits[1].signal(), "KILL");
}

TEST_F(ReadySshExecutorTest, SignalBeforeStartCancelsTheJob) {
  m_executor->start_task(1, "touch " + m_dir.file("ran"));
  m_executor->signal_task(1, SIGTERM);
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_events.exits.count(1) > 0; }));
  EXPECT_EQ(m_events.exits[1].signal(), "TERM");
  EXPECT_NE(m_events.exits[1].error().find("before it started"), std::string::npos);
  EXPECT_EQ(m_events.pgids.count(1), 0u);
  EXPECT_EQ(access(m_dir.file("ran").c_str(), F_OK), -1);
}

TEST_F(SshExecutorTest, UnknownHostKeyIsRefusedWithTheFix) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.known_hosts = m_dir.write("empty_known_hosts", "");
  auto executor = connect(*sshd, options);
  Status error = failure_of(*executor);
  EXPECT_EQ(error.kind(), ErrorKind::host_key);
  EXPECT_NE(error.message().find("ssh-keyscan -p " + std::to_string(sshd->port()) +
                                 " 127.0.0.1 >> " + options.known_hosts),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("--accept-new-host-keys"), std::string::npos);
  EXPECT_EQ(read_text(options.known_hosts), "");
}

TEST_F(SshExecutorTest, AcceptNewHostKeyRecordsItAndConnects) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.known_hosts = m_dir.write("new_known_hosts", "# mine, no newline at end");
  options.accept_new_host_keys = true;
  auto executor = ready_executor(*sshd, options);
  EXPECT_EQ(read_text(options.known_hosts),
            "# mine, no newline at end\n" + sshd->known_hosts_line() + "\n");

  // The recorded key is now known: a strict executor connects too.
  Recorder second_events;
  options.accept_new_host_keys = false;
  auto second = make_ssh_executor(1, address_of(*sshd), options, second_events);
  second->connect();
  EXPECT_TRUE(becomes_ready(*second, second_events));
}

TEST_F(SshExecutorTest, ChangedHostKeyIsAlwaysRefused) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string changed_line = other_host_key_line(*sshd);
  std::string name = changed_line.substr(0, changed_line.find(' '));
  SshOptions options = options_for(*sshd);
  options.known_hosts = m_dir.write("changed_known_hosts", changed_line);
  options.accept_new_host_keys = true;
  auto executor = connect(*sshd, options);
  Status error = failure_of(*executor);
  EXPECT_EQ(error.kind(), ErrorKind::host_key);
  EXPECT_NE(error.message().find("has changed"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("man-in-the-middle"), std::string::npos);
  EXPECT_NE(error.message().find("ssh-keygen -f " + options.known_hosts + " -R '" + name + "'"),
            std::string::npos);
  EXPECT_EQ(read_text(options.known_hosts), changed_line);
}

TEST_F(SshExecutorTest, HashedKnownHostsEntryMatches) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  std::string command = "ssh-keygen -H -f " + shell_quote(options.known_hosts) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  ASSERT_EQ(read_text(options.known_hosts).rfind("|1|", 0), 0u) << "the entry was not hashed";
  auto executor = ready_executor(*sshd, options);
}

TEST_F(SshExecutorTest, NegotiatesTheKeyTypeKnownHostsHolds) {
  // The server also has an ECDSA key, which libssh2 would negotiate first;
  // known_hosts holds only the ed25519 key.
  generate_key(m_dir.file("ecdsa_host_key"), "ecdsa");
  SshdOptions sshd_options;
  sshd_options.extra_config = "HostKey " + m_dir.file("ecdsa_host_key");
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto executor = ready_executor(*sshd, options_for(*sshd));
}

TEST_F(SshExecutorTest, UnauthorizedKeyFailsListingWhatWasTried) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string stranger = m_dir.file("stranger_ed25519");
  generate_key(stranger, "ed25519");
  SshOptions options = options_for(*sshd);
  options.identity_files = {stranger, m_dir.file("missing_key")};
  auto executor = connect(*sshd, options);
  Status error = failure_of(*executor);
  EXPECT_EQ(error.kind(), ErrorKind::auth);
  EXPECT_NE(error.message().find("tried " + stranger), std::string::npos) << error.message();
  EXPECT_NE(error.message().find(m_dir.file("missing_key") + " (no such file)"), std::string::npos);
  EXPECT_NE(error.message().find("authorized_keys"), std::string::npos);
}

TEST_F(SshExecutorTest, EncryptedKeyIsSkippedWithANote) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string locked = m_dir.file("locked_ed25519");
  generate_key(locked, "ed25519", "secret passphrase");
  SshOptions options = options_for(*sshd);
  options.identity_files = {locked};
  auto executor = connect(*sshd, options);
  Status error = failure_of(*executor);
  EXPECT_EQ(error.kind(), ErrorKind::auth);
  EXPECT_NE(error.message().find(locked + " (encrypted"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("ssh-agent"), std::string::npos);
}

TEST_F(SshExecutorTest, RsaKeyFailureRecommendsEd25519) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string rsa = m_dir.file("client_rsa");
  generate_key(rsa, "rsa");
  {
    std::ofstream authorized(sshd->authorized_keys_file(), std::ios::app);
    authorized << read_text(rsa + ".pub");
  }
  SshOptions options = options_for(*sshd);
  options.identity_files = {rsa};
  auto executor = connect(*sshd, options);
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.failure || m_events.ready; }));
  if (m_events.ready) GTEST_SKIP() << "this server still accepts ssh-rsa signatures";
  EXPECT_EQ(m_events.failure->kind(), ErrorKind::auth);
  EXPECT_NE(m_events.failure->message().find("RSA"), std::string::npos)
      << m_events.failure->message();
  EXPECT_NE(m_events.failure->message().find("ed25519"), std::string::npos);
}

TEST_F(SshExecutorTest, AgentIdentityAuthenticates) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::optional<testing::SshAgent> agent;
  agent.emplace(m_dir.file("agent.sock"));
  ASSERT_TRUE(agent->add(sshd->client_key()));
  std::string stranger = m_dir.file("stranger_ed25519");
  generate_key(stranger, "ed25519");

  SshOptions options = options_for(*sshd);
  options.use_agent = true;
  options.agent_socket = agent->socket();
  options.identity_files = {stranger};
  auto executor = connect(*sshd, options);
  EXPECT_TRUE(becomes_ready(*executor, m_events));
  agent.reset();  // the connection no longer needs it
  JobExit exit = run_job(*executor, "echo via agent");
  EXPECT_EQ(m_events.out[1], "via agent\n");
}

TEST_F(SshExecutorTest, ClosedPortIsAConnectError) {
  int port = testing::unused_port();
  SshOptions options = options_trusting_nothing();
  options.identity_files = {m_dir.file("none")};
  Status error = failure_connecting_to(port, options);
  EXPECT_EQ(error.kind(), ErrorKind::connect);
  EXPECT_EQ(error.message(), "127.0.0.1:" + std::to_string(port) + ": connection refused");
}

TEST_F(SshExecutorTest, ServerThatNeverAnswersTimesOut) {
  int port = 0;
  int listener = testing::silent_listener(port);
  SshOptions options = options_trusting_nothing();
  options.connect_timeout = 300ms;
  Status error = failure_connecting_to(port, options);
  close(listener);
  EXPECT_EQ(error.kind(), ErrorKind::timeout);
  EXPECT_NE(error.message().find("timed out after 300 ms"), std::string::npos) << error.message();
}

TEST_F(ReadySshExecutorTest, KilledServerLosesRunningJobsThenFailsHost) {
  m_executor->start_task(1, "sleep 60");
  m_executor->start_task(2, "sleep 60");
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_events.pgids.size() == 2; }));
  m_sshd->stop();
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_events.failure.has_value(); }));
  EXPECT_EQ(m_events.failure->kind(), ErrorKind::disconnected);
  for (JobId job : {1, 2}) {
    EXPECT_TRUE(m_events.exits[job].lost());
    EXPECT_FALSE(m_events.exits[job].error().empty());
    EXPECT_EQ(m_events.exit_reports[job], 1);
  }
  EXPECT_EQ(m_events.log.back(), "failed");

  // Later jobs are refused, not lost.
  m_executor->start_task(3, "echo late");
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_events.exits.count(3) > 0; }));
  EXPECT_FALSE(m_events.exits[3].lost());
  EXPECT_FALSE(m_events.exits[3].error().empty());
}

TEST_F(SshExecutorTest, SilentServerIsDetectedByKeepalive) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.keepalive_interval = 1s;
  options.keepalive_count_max = 1;
  auto executor = ready_executor(*sshd, options);
  executor->start_task(1, "sleep 60");
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.pgids.count(1) > 0; }));
  sshd->pause_sessions();
  bool failed = run_until(
      *executor, [&] { return m_events.failure.has_value(); }, 10s);
  sshd->resume_sessions();
  ASSERT_TRUE(failed);
  EXPECT_EQ(m_events.failure->kind(), ErrorKind::disconnected);
  EXPECT_NE(m_events.failure->message().find("keepalive"), std::string::npos)
      << m_events.failure->message();
  EXPECT_TRUE(m_events.exits[1].lost());
}

TEST_F(SshExecutorTest, QuietJobOutlivesKeepaliveInterval) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.keepalive_interval = 1s;
  options.keepalive_count_max = 2;
  auto executor = ready_executor(*sshd, options);
  JobExit exit = run_job(*executor, "sleep 3.5; echo awake");
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_EQ(m_events.out[1], "awake\n");
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(SshExecutorTest, IdleConnectionAnswersServerKeepalives) {
  // sshd drops a client that leaves two keepalive requests unanswered.
  SshdOptions sshd_options;
  sshd_options.extra_config = "ClientAliveInterval 1\nClientAliveCountMax 1";
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto executor = ready_executor(*sshd, options_for(*sshd));
  run_job(*executor, "echo ${SSH_CONNECTION#* }", 1);
  idle_for(*executor, 5000ms);
  run_job(*executor, "echo ${SSH_CONNECTION#* }", 2);
  EXPECT_TRUE(m_events.exits[2].succeeded()) << m_events.exits[2].error();
  EXPECT_EQ(m_events.out[1], m_events.out[2]) << "the idle connection was dropped";
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(ReadySshExecutorTest, DroppedIdleConnectionIsReplaced) {
  run_job(*m_executor, "echo ${SSH_CONNECTION#* }", 1);
  m_sshd->kill_sessions();
  idle_for(*m_executor, 200ms);
  JobExit exit = run_job(*m_executor, "echo ${SSH_CONNECTION#* }", 2);
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_NE(m_events.out[1], m_events.out[2]);
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(SshExecutorTest, BurstOfHandshakesSurvivesMaxStartups) {
  SshdOptions sshd_options;
  sshd_options.max_sessions = 1;
  sshd_options.max_startups = "1:100:1";
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto executor = ready_executor(*sshd, options_for(*sshd));
  constexpr int k_jobs = 6;
  for (JobId job = 1; job <= k_jobs; ++job)
    executor->start_task(job, "echo ${SSH_CONNECTION#* }; sleep 0.3");
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.exits.size() == k_jobs; }));
  std::set<std::string> servers;
  for (JobId job = 1; job <= k_jobs; ++job) {
    EXPECT_TRUE(m_events.exits[job].succeeded()) << m_events.exits[job].error();
    servers.insert(m_events.out[job]);
  }
  EXPECT_GT(servers.size(), 1u);
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(SshExecutorTest, FleetOfServersSharesOneIdentity) {
  auto first = start_sshd({}, "node1");
  RUNNER_REQUIRE_SSHD(first);
  auto second = start_sshd_sharing_key(*first, "node2");
  ASSERT_TRUE(second);
  std::string known_hosts = m_dir.write(
      "fleet_known_hosts", first->known_hosts_line() + "\n" + second->known_hosts_line() + "\n");
  SshOptions options;
  options.config_file = empty_ssh_config();
  options.use_agent = false;
  options.identity_files = {first->client_key()};
  options.known_hosts = known_hosts;
  Recorder events_2;
  auto executor_1 = make_ssh_executor(0, address_of(*first), options, m_events);
  auto executor_2 = make_ssh_executor(1, address_of(*second), options, events_2);
  executor_1->connect();
  executor_2->connect();
  ASSERT_TRUE(run_until(*executor_1, [&] { return m_events.ready || m_events.failure; }));
  ASSERT_TRUE(run_until(*executor_2, [&] { return events_2.ready || events_2.failure; }));
  ASSERT_TRUE(m_events.ready);
  ASSERT_TRUE(events_2.ready);
  run_job(*executor_1, "echo one");
  executor_2->start_task(7, "echo two");
  ASSERT_TRUE(run_until(*executor_2, [&] { return events_2.exits.count(7) > 0; }));
  EXPECT_EQ(m_events.out[1], "one\n");
  EXPECT_EQ(events_2.out[7], "two\n");
}

TEST_F(ReadySshExecutorTest, ShutdownClosesOnceJobsEnd) {
  m_executor->start_task(1, "sleep 0.3; echo finished");
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_events.pgids.count(1) > 0; }));
  m_executor->shutdown();
  EXPECT_FALSE(m_executor->idle());
  ASSERT_TRUE(run_until(*m_executor, [&] { return m_executor->idle(); }));
  EXPECT_EQ(m_events.out[1], "finished\n");
  EXPECT_TRUE(m_events.exits[1].succeeded());
  EXPECT_FALSE(m_events.failure.has_value());
}

// ---------------------------------------------------------------------------
// Launchers: one remote shell per channel starts the jobs

// What a job printed with "...; ps -o sid= -p $$": its parent (as a pid or a
// program name), then its session id.
struct ParentAndSession {
  std::string parent;
  long session = 0;
};
ParentAndSession parent_and_session(const std::string& output) {
  ParentAndSession result;
  std::istringstream(output) >> result.parent >> result.session;
  return result;
}

TEST_F(ReadySshExecutorTest, JobsOneAfterAnotherShareALauncherEachInASessionOfItsOwn) {
  std::set<std::string> parents;
  std::set<long> groups;
  for (JobId job = 1; job <= 3; ++job) {
    JobExit exit = run_job(*m_executor, "echo $PPID; ps -o sid= -p $$", job);
    EXPECT_TRUE(exit.succeeded()) << exit.error() << m_events.err[job];
    auto [parent, session] = parent_and_session(m_events.out[job]);
    parents.insert(parent);
    EXPECT_EQ(session, m_events.pgids[job]) << "job " << job << " leads its own session";
    groups.insert(m_events.pgids[job]);
  }
  EXPECT_EQ(parents.size(), 1u) << "one launcher started all three";
  EXPECT_EQ(groups.size(), 3u);
}

TEST_F(ReadySshExecutorTest, OutputOfWhatAJobLeftRunningStaysOutOfTheNextJob) {
  JobExit first = run_job(*m_executor, "(sleep 0.5; echo late; echo late >&2) & echo first", 1);
  EXPECT_TRUE(first.succeeded()) << first.error();
  JobExit second = run_job(*m_executor, "sleep 1; echo second", 2);
  EXPECT_TRUE(second.succeeded()) << second.error();
  JobExit third = run_job(*m_executor, "echo third", 3);
  EXPECT_TRUE(third.succeeded()) << third.error();
  EXPECT_EQ(m_events.out[1], "first\n");
  EXPECT_EQ(m_events.out[2], "second\n");
  EXPECT_EQ(m_events.out[3], "third\n");
  for (JobId job = 1; job <= 3; ++job) EXPECT_EQ(m_events.err[job], "") << job;
}

TEST_F(ReadySshExecutorTest, StdinIsEmpty) {
  JobExit exit = run_job(*m_executor, "cat; echo done");
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_EQ(m_events.out[1], "done\n");
}

TEST_F(SshExecutorTest, HostWithoutSetsidRunsAChannelPerJob) {
  // The login shell finds only these programs: no setsid.
  std::string bin = m_dir.file("bin");
  std::filesystem::create_directory(bin);
  for (const char* program : {"sh", "cat", "ps"}) {
    std::filesystem::create_symlink(std::string("/bin/") + program, bin + "/" + program);
  }
  SshdOptions sshd_options;
  sshd_options.session_environment = {"PATH=" + bin};
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto executor = ready_executor(*sshd, options_for(*sshd));
  for (JobId job = 1; job <= 2; ++job) {
    JobExit exit = run_job(*executor, "cat /proc/$PPID/comm; ps -o sid= -p $$", job);
    EXPECT_TRUE(exit.succeeded()) << exit.error() << m_events.err[job];
    auto [parent, session] = parent_and_session(m_events.out[job]);
    EXPECT_EQ(parent, "sshd") << "started by sshd, not by a launcher";
    EXPECT_EQ(session, m_events.pgids[job]);
  }
}

// ---------------------------------------------------------------------------
// Hosts resolved through a test-made ssh configuration

class SshConfigExecutorTest : public SshExecutorTest {
 protected:
  // An ssh config in which host "target" is reached through "bastion".
  std::string write_jump_config(const Sshd& target, const Sshd& jump,
                                const std::string& known_hosts) {
    return m_dir.write("ssh_config",
                       host_block("target", target, known_hosts, "  ProxyJump bastion\n") +
                           host_block("bastion", jump, known_hosts));
  }

  // A jump host and a host behind it that accept one client key.
  struct JumpPair {
    std::unique_ptr<Sshd> jump;
    std::unique_ptr<Sshd> target;
  };
  JumpPair start_jump_pair(const SshdOptions& jump_options = {}) {
    JumpPair pair;
    pair.jump = start_sshd(jump_options, "jump");
    if (!pair.jump) return pair;
    pair.target = start_sshd_sharing_key(*pair.jump, "target");
    return pair;
  }

  // Connects to "target" through "bastion", with a known_hosts file that
  // trusts both hosts.
  std::unique_ptr<Executor> connect_through_jump(const JumpPair& pair) {
    std::string config = write_jump_config(*pair.target, *pair.jump,
                                           known_hosts_of({pair.jump.get(), pair.target.get()}));
    return connect_alias("target", config_only(config));
  }

  // "Host ALIAS" with everything needed to reach `sshd`, then `extra` lines.
  static std::string host_block(const std::string& alias, const Sshd& sshd,
                                const std::string& known_hosts, const std::string& extra = "") {
    return "Host " + alias + "\n  HostName 127.0.0.1\n  Port " + std::to_string(sshd.port()) +
           "\n  User " + sshd.user() + "\n  IdentityFile " + sshd.client_key() +
           "\n  UserKnownHostsFile " + known_hosts + "\n" + extra;
  }

  // Options that leave everything to the ssh configuration `config`.
  static SshOptions config_only(const std::string& config) {
    SshOptions options;
    options.config_file = config;
    options.use_agent = false;
    options.ask_passphrase = [](const std::string&) { return std::nullopt; };
    options.connect_timeout = 10s;
    return options;
  }

  static HostAddress alias(const std::string& name) {
    HostAddress address;
    address.host = name;
    return address;
  }

  std::unique_ptr<Executor> connect_alias(const std::string& name, const SshOptions& options) {
    auto executor = make_ssh_executor(0, alias(name), options, m_events);
    executor->connect();
    return executor;
  }
};

TEST_F(SshConfigExecutorTest, AliasFromPatternsAndIncludeReachesTheHost) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string known_hosts = known_hosts_of({sshd.get()});
  m_dir.write("ssh_config.d/gpu.conf",
              "Host gpu-one\n  Port " + std::to_string(sshd->port()) + "\n");
  std::string config = m_dir.write(
      "ssh_config", "Include " + m_dir.file("ssh_config.d") +
                        "/*.conf\n"
                        "Host gpu-*\n  HostName 127.0.0.1\n  Port 1\n  User " +
                        sshd->user() + "\n  IdentityFile " + m_dir.file("missing_key") +
                        "\n  IdentityFile " + sshd->client_key() + "\n  UserKnownHostsFile " +
                        known_hosts + "\n  StrictHostKeyChecking yes\n");
  auto executor = connect_alias("gpu-one", config_only(config));
  ASSERT_TRUE(becomes_ready(*executor, m_events));
  run_job(*executor, "echo $SSH_CONNECTION");
  EXPECT_NE(m_events.out[1].find(" " + std::to_string(sshd->port()) + "\n"), std::string::npos)
      << m_events.out[1];
  std::optional<SshHostInfo> info = ssh_host_info(*executor);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->auth, "key " + sshd->client_key());
  EXPECT_EQ(info->host_key, "known");
  EXPECT_NE(info->endpoint.find("gpu-one"), std::string::npos) << info->endpoint;
  EXPECT_TRUE(info->round_trip.has_value());
}

TEST_F(SshConfigExecutorTest, UserAndPortWrittenInlineWinOverTheConfig) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string known_hosts = known_hosts_of({sshd.get()});
  std::string config =
      m_dir.write("ssh_config",
                  "Host gpu-one\n  HostName 127.0.0.1\n  Port 1\n  User nobody-here\n"
                  "  IdentityFile " +
                      sshd->client_key() + "\n  UserKnownHostsFile " + known_hosts + "\n");
  HostAddress address = alias("gpu-one");
  address.user = sshd->user();
  address.port = sshd->port();
  auto executor = make_ssh_executor(0, address, config_only(config), m_events);
  executor->connect();
  EXPECT_TRUE(becomes_ready(*executor, m_events));
}

TEST_F(SshConfigExecutorTest, HostKeyPoliciesForUnknownKnownAndChangedKeys) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string changed_line = other_host_key_line(*sshd);
  std::string known_line = sshd->known_hosts_line() + "\n";

  for (std::string policy : {"yes", "ask", "accept-new", "no"}) {
    for (std::string situation : {"known", "unknown", "changed"}) {
      SCOPED_TRACE(policy + " / " + situation);
      std::string before = situation == "known"     ? known_line
                           : situation == "changed" ? changed_line
                                                    : "";
      std::string known_hosts = m_dir.write("kh_" + policy + "_" + situation, before);
      std::string config = m_dir.write(
          "ssh_config",
          host_block("node", *sshd, known_hosts, "  StrictHostKeyChecking " + policy + "\n"));
      Recorder events;
      auto executor = make_ssh_executor(0, alias("node"), config_only(config), events);
      executor->connect();
      ASSERT_TRUE(run_until(*executor, [&] { return events.ready || events.failure; }));
      bool accepts_new = policy == "accept-new" || policy == "no";
      if (situation == "known" || (situation == "unknown" && accepts_new)) {
        EXPECT_TRUE(events.ready) << events.failure->message();
        EXPECT_EQ(read_text(known_hosts), situation == "known" ? known_line : known_line);
        if (situation == "unknown") {
          EXPECT_EQ(ssh_host_info(*executor)->host_key, "new, added to " + known_hosts);
        }
        continue;
      }
      ASSERT_TRUE(events.failure);
      EXPECT_EQ(events.failure->kind(), ErrorKind::host_key);
      EXPECT_EQ(read_text(known_hosts), before) << "the file must not change";
      EXPECT_NE(events.failure->message().find("node"), std::string::npos);
      if (situation == "changed") {
        EXPECT_NE(events.failure->message().find("REMOTE HOST IDENTIFICATION HAS CHANGED"),
                  std::string::npos)
            << events.failure->message();
        EXPECT_NE(events.failure->message().find("ssh-keygen -f " + known_hosts + " -R"),
                  std::string::npos);
      } else {
        EXPECT_NE(events.failure->message().find("ssh-keyscan -p " + std::to_string(sshd->port()) +
                                                 " 127.0.0.1 >> " + known_hosts),
                  std::string::npos)
            << events.failure->message();
        EXPECT_EQ(
            events.failure->message().find("StrictHostKeyChecking is yes") != std::string::npos,
            policy == "yes");
      }
    }
  }
}

TEST_F(SshConfigExecutorTest, KnownHostsFilesAreReadInOrderAndNewKeysGoToTheFirst) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string first = m_dir.write("kh_first", "");
  std::string second = m_dir.write("kh_second", sshd->known_hosts_line() + "\n");
  std::string config = m_dir.write(
      "ssh_config",
      host_block("node", *sshd, first + " " + second, "  StrictHostKeyChecking accept-new\n"));
  auto executor = connect_alias("node", config_only(config));
  EXPECT_TRUE(becomes_ready(*executor, m_events));
  EXPECT_EQ(read_text(first), "") << "a key known in the second file is known";

  std::string third = m_dir.write("kh_third", "");
  config = m_dir.write("ssh_config", host_block("node", *sshd, third + " " + first,
                                                "  StrictHostKeyChecking accept-new\n"));
  Recorder events;
  auto again = make_ssh_executor(0, alias("node"), config_only(config), events);
  again->connect();
  EXPECT_TRUE(becomes_ready(*again, events));
  EXPECT_EQ(read_text(third), sshd->known_hosts_line() + "\n");
}

TEST_F(SshConfigExecutorTest, HostKeyAliasNamesTheKnownHostsEntry) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string line = sshd->known_hosts_line();
  std::string known_hosts = m_dir.write("kh", "gpu-box-key" + line.substr(line.find(' ')) + "\n");
  std::string config = m_dir.write(
      "ssh_config", host_block("node", *sshd, known_hosts,
                               "  HostKeyAlias gpu-box-key\n  StrictHostKeyChecking yes\n"));
  auto executor = connect_alias("node", config_only(config));
  EXPECT_TRUE(becomes_ready(*executor, m_events));
}

TEST_F(SshConfigExecutorTest, ProxyJumpGoesThroughTheJumpHost) {
  SshdOptions jump_options;
  jump_options.log_level = "DEBUG1";
  JumpPair hosts = start_jump_pair(jump_options);
  RUNNER_REQUIRE_SSHD(hosts.jump);
  ASSERT_TRUE(hosts.target);
  auto& [jump, target] = hosts;
  auto executor = connect_through_jump(hosts);
  ASSERT_TRUE(becomes_ready(*executor, m_events));
  JobExit exit = run_job(*executor, "echo through; head -c 200000 /dev/zero | wc -c");
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_EQ(m_events.out[1], "through\n200000\n");
  EXPECT_NE(jump->log().find("target 127.0.0.1 port " + std::to_string(target->port())),
            std::string::npos)
      << "the jump host did not forward to the target:\n"
      << jump->log();
  EXPECT_EQ(ssh_host_info(*executor)->endpoint, "target (via bastion)");
}

TEST_F(SshConfigExecutorTest, ProxyJumpChainOfTwoHops) {
  SshdOptions logged;
  logged.log_level = "DEBUG1";
  auto outer = start_sshd(logged, "outer");
  RUNNER_REQUIRE_SSHD(outer);
  auto inner = start_sshd_sharing_key(*outer, "inner", logged);
  auto target = start_sshd_sharing_key(*outer, "target");
  ASSERT_TRUE(inner && target);
  std::string known_hosts = known_hosts_of({outer.get(), inner.get(), target.get()});
  // "far" names both hops; "near" reaches inner, whose own ProxyJump is outer.
  std::string config = m_dir.write(
      "ssh_config", host_block("far", *target, known_hosts, "  ProxyJump outer,inner\n") +
                        host_block("near", *target, known_hosts, "  ProxyJump inner2\n") +
                        host_block("inner2", *inner, known_hosts, "  ProxyJump outer\n") +
                        host_block("outer", *outer, known_hosts) +
                        host_block("inner", *inner, known_hosts));
  for (std::string name : {"far", "near"}) {
    SCOPED_TRACE(name);
    Recorder events;
    auto executor = make_ssh_executor(0, alias(name), config_only(config), events);
    executor->connect();
    ASSERT_TRUE(becomes_ready(*executor, events));
    executor->start_task(1, "echo two hops");
    ASSERT_TRUE(run_until(*executor, [&] { return events.exits.count(1) > 0; }));
    EXPECT_EQ(events.out[1], "two hops\n");
  }
  EXPECT_EQ(count(outer->log(), "target 127.0.0.1 port " + std::to_string(inner->port())), 2)
      << outer->log();
  EXPECT_EQ(count(inner->log(), "target 127.0.0.1 port " + std::to_string(target->port())), 2)
      << inner->log();
}

TEST_F(SshConfigExecutorTest, HostsBehindOneJumpHostShareItsConnection) {
  SshdOptions jump_options;
  jump_options.log_level = "INFO";
  auto jump = start_sshd(jump_options, "jump");
  RUNNER_REQUIRE_SSHD(jump);
  auto first = start_sshd_sharing_key(*jump, "first");
  auto second = start_sshd_sharing_key(*jump, "second");
  ASSERT_TRUE(first && second);
  std::string known_hosts = known_hosts_of({jump.get(), first.get(), second.get()});
  std::string config = m_dir.write(
      "ssh_config", host_block("first", *first, known_hosts, "  ProxyJump bastion\n") +
                        host_block("second", *second, known_hosts, "  ProxyJump bastion\n") +
                        host_block("bastion", *jump, known_hosts));
  std::shared_ptr<SshContext> context = make_ssh_context(config_only(config));
  EXPECT_TRUE(resolve_ssh_config(*context, {alias("first"), alias("second")}).empty());
  Recorder second_events;
  auto one = make_ssh_executor(0, alias("first"), context, m_events);
  auto two = make_ssh_executor(1, alias("second"), context, second_events);
  one->connect();
  two->connect();
  ASSERT_TRUE(run_all_until({one.get(), two.get()}, [&] {
    return (m_events.ready || m_events.failure) && (second_events.ready || second_events.failure);
  }));
  ASSERT_TRUE(m_events.ready) << m_events.failure->message();
  ASSERT_TRUE(second_events.ready) << second_events.failure->message();
  one->start_task(1, "echo one");
  two->start_task(2, "echo two");
  ASSERT_TRUE(run_all_until({one.get(), two.get()}, [&] {
    return m_events.exits.count(1) && second_events.exits.count(2);
  }));
  EXPECT_EQ(m_events.out[1], "one\n");
  EXPECT_EQ(second_events.out[2], "two\n");
  EXPECT_EQ(count(jump->log(), "Accepted publickey"), 1) << jump->log();
}

TEST_F(SshConfigExecutorTest, JumpHostThatRefusesForwardingIsNamedWithTheFix) {
  SshdOptions jump_options;
  jump_options.extra_config = "AllowTcpForwarding no";
  JumpPair hosts = start_jump_pair(jump_options);
  RUNNER_REQUIRE_SSHD(hosts.jump);
  ASSERT_TRUE(hosts.target);
  auto executor = connect_through_jump(hosts);
  Status error = failure_of(*executor);
  EXPECT_EQ(error.kind(), ErrorKind::connect);
  EXPECT_NE(error.message().find("target"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("bastion"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("AllowTcpForwarding"), std::string::npos) << error.message();
}

TEST_F(SshConfigExecutorTest, UnusableJumpHostIsNamed) {
  auto target = start_sshd();
  RUNNER_REQUIRE_SSHD(target);
  std::string known_hosts = known_hosts_of({target.get()});
  // The jump host's key is not known.
  auto jump = start_sshd_sharing_key(*target, "jump");
  ASSERT_TRUE(jump);
  std::string config = write_jump_config(*target, *jump, known_hosts);
  auto executor = connect_alias("target", config_only(config));
  Status error = failure_of(*executor);
  EXPECT_EQ(error.kind(), ErrorKind::host_key);
  EXPECT_NE(error.message().find("target (via bastion): cannot reach it through its jump host: "
                                 "bastion"),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("ssh-keyscan -p " + std::to_string(jump->port())),
            std::string::npos)
      << error.message();
}

TEST_F(SshConfigExecutorTest, UnknownKeyBehindAJumpHostSaysHowToRecordIt) {
  JumpPair hosts = start_jump_pair();
  RUNNER_REQUIRE_SSHD(hosts.jump);
  ASSERT_TRUE(hosts.target);
  auto& [jump, target] = hosts;
  std::string known_hosts = known_hosts_of({jump.get()});
  std::string config = write_jump_config(*target, *jump, known_hosts);
  auto executor = connect_alias("target", config_only(config));
  Status error = failure_of(*executor);
  EXPECT_EQ(error.kind(), ErrorKind::host_key);
  EXPECT_NE(error.message().find("ssh -F " + config + " -o StrictHostKeyChecking=accept-new"),
            std::string::npos)
      << error.message();
}

TEST_F(SshExecutorTest, ConnectAfterHostFailedStartsAfresh) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  std::string known_hosts = options.known_hosts;
  options.known_hosts = m_dir.write("kh_later", "");
  auto executor = connect(*sshd, options);
  EXPECT_EQ(failure_of(*executor).kind(), ErrorKind::host_key);

  // The key is recorded meanwhile: connecting again succeeds.
  m_dir.write("kh_later", sshd->known_hosts_line() + "\n");
  ASSERT_TRUE(connects_again(*executor));
  executor->start_task(1, "echo ${SSH_CONNECTION#* }; sleep 30");
  ASSERT_TRUE(
      run_until(*executor, [&] { return m_events.out[1].find('\n') != std::string::npos; }));

  // The connection breaks under a running job: lost, then host_failed.
  sshd->kill_sessions();
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.failure.has_value(); }));
  EXPECT_TRUE(m_events.exits[1].lost());

  // And once more: a new connection, reported ready again.
  ASSERT_TRUE(connects_again(*executor));
  JobExit exit = run_job(*executor, "echo ${SSH_CONNECTION#* }", 2);
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_NE(m_events.out[2], m_events.out[1]) << "the old connection was reused";
  EXPECT_EQ(m_events.log, (std::vector<std::string>{"failed", "ready", "started 1", "exited 1",
                                                    "failed", "ready", "started 2", "exited 2"}));
}

TEST_F(SshConfigExecutorTest, ConnectAfterTheJumpHostFailedUsesANewJumpConnection) {
  JumpPair hosts = start_jump_pair();
  RUNNER_REQUIRE_SSHD(hosts.jump);
  ASSERT_TRUE(hosts.target);
  auto& [jump, target] = hosts;
  auto executor = connect_through_jump(hosts);
  ASSERT_TRUE(becomes_ready(*executor, m_events));
  executor->start_task(1, "sleep 30");
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.pgids.count(1) > 0; }));
  jump->kill_sessions();
  ASSERT_TRUE(run_until(*executor, [&] { return m_events.failure.has_value(); }));
  EXPECT_TRUE(m_events.exits[1].lost());

  ASSERT_TRUE(connects_again(*executor));
  JobExit exit = run_job(*executor, "echo back", 2);
  EXPECT_EQ(m_events.out[2], "back\n");
}

TEST_F(SshConfigExecutorTest, SixteenHostsOnOneSshdWithLowMaxStartups) {
  SshdOptions sshd_options;
  sshd_options.max_startups = "2:100:2";
  sshd_options.log_level = "INFO";
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  std::string known_hosts = known_hosts_of({sshd.get()});
  // Keys the server refuses come first: each handshake stays unauthenticated
  // (counted by MaxStartups) a little longer, as with a real user's key list.
  std::string refused_keys;
  for (int i = 0; i < 4; ++i) {
    std::string key = m_dir.file("other_key_" + std::to_string(i));
    generate_key(key, "ed25519");
    refused_keys += "  IdentityFile " + key + "\n";
  }
  std::string config =
      m_dir.write("ssh_config",
                  "Host node*\n" + refused_keys +
                      host_block("node*", *sshd, known_hosts).substr(std::strlen("Host node*\n")));
  constexpr int k_hosts = 16;
  std::vector<HostAddress> addresses;
  for (int i = 0; i < k_hosts; ++i) addresses.push_back(alias("node" + std::to_string(i)));
  std::shared_ptr<SshContext> context = make_ssh_context(config_only(config));
  ASSERT_TRUE(resolve_ssh_config(*context, addresses).empty());
  std::vector<Recorder> events(k_hosts);
  std::vector<std::unique_ptr<Executor>> executors;
  std::vector<Executor*> raw;
  for (int i = 0; i < k_hosts; ++i) {
    executors.push_back(make_ssh_executor(i, addresses[i], context, events[i]));
    raw.push_back(executors.back().get());
  }
  for (auto& executor : executors) executor->connect();
  auto all = [&](const std::function<bool(Recorder&)>& test) {
    return std::all_of(events.begin(), events.end(), test);
  };
  ASSERT_TRUE(
      run_all_until(raw, [&] { return all([](Recorder& e) { return e.ready || e.failure; }); }));
  for (int i = 0; i < k_hosts; ++i) {
    ASSERT_TRUE(events[i].ready) << "node" << i << ": " << events[i].failure->message();
  }
  // Without a limit per server, 16 handshakes at once would lose 14 at a
  // time; the limit learns from the first refusals.
  int dropped = count(sshd->log(), "past MaxStartups");
  EXPECT_LT(dropped, k_hosts) << sshd->log();
}

TEST_F(SshExecutorTest, EncryptedKeyPassphraseIsAskedOncePerKeyAndRun) {
  std::string locked = m_dir.file("locked_ed25519");
  generate_key(locked, "ed25519", "open sesame");
  SshdOptions sshd_options;
  sshd_options.client_key = locked;
  auto first = start_sshd(sshd_options, "first");
  RUNNER_REQUIRE_SSHD(first);
  auto second = start_sshd(sshd_options, "second");
  ASSERT_TRUE(second);
  std::vector<std::string> asked;
  SshOptions options = options_for(*first);
  options.known_hosts = known_hosts_of({first.get(), second.get()});
  options.ask_passphrase = [&](const std::string& key) -> std::optional<std::string> {
    asked.push_back(key);
    return asked.size() == 1 ? "wrong guess" : "open sesame";
  };
  std::shared_ptr<SshContext> context = make_ssh_context(options);
  Recorder second_events;
  auto one = make_ssh_executor(0, address_of(*first), context, m_events);
  auto two = make_ssh_executor(1, address_of(*second), context, second_events);
  one->connect();
  ASSERT_TRUE(becomes_ready(*one, m_events));
  two->connect();
  ASSERT_TRUE(becomes_ready(*two, second_events));
  EXPECT_EQ(asked, (std::vector<std::string>{locked, locked}))
      << "asked again after a wrong passphrase, then never again";
  EXPECT_EQ(ssh_host_info(*two)->auth, "key " + locked + " (passphrase)");
}

TEST_F(SshConfigExecutorTest, IdentitiesOnlyOffersOnlyTheConfiguredAgentKeys) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  testing::SshAgent agent(m_dir.file("agent.sock"));
  ASSERT_TRUE(agent.add(sshd->client_key()));
  std::string stranger = m_dir.file("stranger_ed25519");
  generate_key(stranger, "ed25519");
  std::string known_hosts = known_hosts_of({sshd.get()});
  for (bool identities_only : {false, true}) {
    SCOPED_TRACE(identities_only ? "IdentitiesOnly yes" : "IdentitiesOnly no");
    std::string config = m_dir.write(
        "ssh_config", "Host node\n  HostName 127.0.0.1\n  Port " + std::to_string(sshd->port()) +
                          "\n  User " + sshd->user() + "\n  IdentityFile " + stranger +
                          "\n  UserKnownHostsFile " + known_hosts + "\n  IdentityAgent " +
                          agent.socket() + "\n  IdentitiesOnly " +
                          (identities_only ? "yes" : "no") + "\n");
    SshOptions options = config_only(config);
    options.use_agent = true;
    Recorder events;
    auto executor = make_ssh_executor(0, alias("node"), options, events);
    executor->connect();
    ASSERT_TRUE(run_until(*executor, [&] { return events.ready || events.failure; }));
    if (!identities_only) {
      ASSERT_TRUE(events.ready) << events.failure->message();
      EXPECT_EQ(ssh_host_info(*executor)->auth, "agent key runner-test");
    } else {
      ASSERT_TRUE(events.failure);
      EXPECT_NE(events.failure->message().find("IdentitiesOnly"), std::string::npos)
          << events.failure->message();
      EXPECT_NE(events.failure->message().find("tried " + stranger), std::string::npos)
          << events.failure->message();
    }
  }
}

TEST_F(SshConfigExecutorTest, ProxyCommandRelaysTheConnectionAndIsReapedAfterIt) {
  auto sshd = start_sshd(logging("DEBUG1"));
  RUNNER_REQUIRE_SSHD(sshd);
  std::string known_hosts = known_hosts_of({sshd.get()});
  // The classic relay before ProxyJump: `ssh -W` through a bastion (here the
  // host's own sshd). The shell around it notes its tokens and pid.
  std::string config_path = m_dir.file("ssh_config");
  std::string noted = m_dir.file("relay_noted");  // tokens and pid, written by the relay
  std::string relay =
      "sh -c 'echo %n %h:%p $$ > " + noted + "; exec ssh -F " + config_path + " -W %h:%p bastion'";
  m_dir.write("ssh_config",
              host_block("boxed", *sshd, known_hosts, "  ProxyCommand " + relay + "\n") +
                  host_block("bastion", *sshd, known_hosts,
                             "  BatchMode yes\n  StrictHostKeyChecking yes\n"));
  auto executor = connect_alias("boxed", config_only(config_path));
  ASSERT_TRUE(becomes_ready(*executor, m_events));
  EXPECT_EQ(ssh_host_info(*executor)->endpoint, "boxed (via ProxyCommand)");
  JobExit exit = run_job(*executor, "echo through the relay");
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_EQ(m_events.out[1], "through the relay\n");
  std::istringstream note(m_dir.read("relay_noted"));
  std::string alias, target;
  long relay_pid = 0;
  note >> alias >> target >> relay_pid;
  EXPECT_EQ(alias, "boxed");
  EXPECT_EQ(target, "127.0.0.1:" + std::to_string(sshd->port()));
  EXPECT_NE(sshd->log().find("target 127.0.0.1 port " + std::to_string(sshd->port())),
            std::string::npos)
      << "not forwarded by the bastion:\n"
      << sshd->log();
  ASSERT_GT(relay_pid, 0);
  EXPECT_EQ(::kill(static_cast<pid_t>(relay_pid), 0), 0) << "the relay is not running";
  executor.reset();
  // Gone, and reaped: a zombie would still answer kill(pid, 0).
  EXPECT_NE(::kill(static_cast<pid_t>(relay_pid), 0), 0) << "the relay outlived its connection";
}

TEST_F(SshConfigExecutorTest, CompressionYesCompressesTheStream) {
  auto sshd = start_sshd(logging("DEBUG1"));
  RUNNER_REQUIRE_SSHD(sshd);
  std::string known_hosts = known_hosts_of({sshd.get()});
  for (bool compression : {false, true}) {
    SCOPED_TRACE(compression ? "Compression yes" : "Compression no");
    std::string config = m_dir.write(
        "ssh_config",
        host_block("node", *sshd, known_hosts,
                   std::string("  Compression ") + (compression ? "yes" : "no") + "\n"));
    Recorder events;
    auto executor = make_ssh_executor(0, alias("node"), config_only(config), events);
    executor->connect();
    ASSERT_TRUE(run_until(*executor, [&] { return events.ready || events.failure; }));
    ASSERT_TRUE(events.ready) << events.failure->message();
    executor->start_task(1, "seq 1 20000");
    ASSERT_TRUE(run_until(*executor, [&] { return events.exits.count(1) > 0; }));
    EXPECT_EQ(count(events.out[1], "\n"), 20000);
    EXPECT_TRUE(events.out[1].ends_with("\n19999\n20000\n"));
  }
  // sshd logs the algorithms of each direction of each connection.
  EXPECT_EQ(count(sshd->log(), "server->client cipher"), 2) << sshd->log();
  EXPECT_EQ(count(sshd->log(), "compression: none"), 2) << sshd->log();
  EXPECT_EQ(count(sshd->log(), "compression: zlib@openssh.com"), 2) << sshd->log();
  EXPECT_LT(sshd->log().find("compression: none"), sshd->log().find("compression: zlib"));
}

TEST_F(SshConfigExecutorTest, AJumpHostReachedByProxyCommandCarriesTheHostsBehindIt) {
  auto bastion = start_sshd(logging("DEBUG1"), "bastion");
  RUNNER_REQUIRE_SSHD(bastion);
  auto target = start_sshd_sharing_key(*bastion, "target");
  ASSERT_TRUE(target);
  std::string known_hosts = known_hosts_of({bastion.get(), target.get()});
  // The bastion is reached by `ssh -W` through itself; the relay notes the
  // name it was started for.
  std::string config_path = m_dir.file("ssh_config");
  std::string relay = "sh -c 'echo %n >> " + m_dir.file("relay_noted") + "; exec ssh -F " +
                      config_path + " -W %h:%p relay'";
  m_dir.write("ssh_config",
              host_block("target", *target, known_hosts, "  ProxyJump bastion\n") +
                  host_block("bastion", *bastion, known_hosts, "  ProxyCommand " + relay + "\n") +
                  host_block("relay", *bastion, known_hosts, "  BatchMode yes\n"));
  auto executor = connect_alias("target", config_only(config_path));
  ASSERT_TRUE(becomes_ready(*executor, m_events));
  JobExit exit = run_job(*executor, "echo ${SSH_CONNECTION##* }");
  EXPECT_TRUE(exit.succeeded()) << exit.error();
  EXPECT_EQ(m_events.out[1], std::to_string(target->port()) + "\n");
  EXPECT_EQ(m_dir.read("relay_noted"), "bastion\n");
  EXPECT_EQ(ssh_host_info(*executor)->endpoint, "target (via bastion)");
}

TEST_F(SshConfigExecutorTest, AProxyCommandThatEndsAtOnceIsNamedInTheError) {
  std::string config = m_dir.write("ssh_config", "Host boxed\n  ProxyCommand false\n");
  Status error = failure_of(*connect_alias("boxed", config_only(config)));
  EXPECT_NE(error.message().find("its ProxyCommand (false) ended before the SSH handshake"),
            std::string::npos)
      << error.message();
}

TEST_F(SshConfigExecutorTest, ProxyUseFdpassIsRefusedWithWhatToUseInstead) {
  std::string config =
      m_dir.write("ssh_config", "Host boxed\n  ProxyCommand relay %h %p\n  ProxyUseFdpass yes\n");
  Status error = failure_of(*connect_alias("boxed", config_only(config)));
  EXPECT_NE(error.message().find("ProxyUseFdpass"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("ssh -W %h:%p"), std::string::npos) << error.message();
}

}  // namespace
}  // namespace runner
