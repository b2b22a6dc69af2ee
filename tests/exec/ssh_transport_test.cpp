// The SSH transport against real sshd processes on 127.0.0.1: jobs, output,
// exit statuses, signals, host keys, authentication, connection pooling and
// lost connections. Each test drives the transport with a small poll loop.
#include "runner/exec/ssh_transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runner/exec/shell.h"
#include "support/sshd.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Sshd;
using testing::SshdOptions;
using testing::TempDir;

// Everything a transport reported, in order.
class Recorder : public TransportEvents {
 public:
  void host_ready(int) override {
    ready = true;
    log.push_back("ready");
  }
  void host_failed(int, const TransportError& error) override {
    failure = error;
    log.push_back("failed");
  }
  void job_started(JobId job, long pgid) override {
    pgids[job] = pgid;
    log.push_back("started " + std::to_string(job));
  }
  void job_output(JobId job, OutputStream stream, std::string_view bytes) override {
    (stream == OutputStream::out ? out : err)[job].append(bytes);
    if (on_output) on_output(job, stream);
  }
  void job_exited(JobId job, const JobExit& exit) override {
    exits[job] = exit;
    ++exit_reports[job];
    log.push_back("exited " + std::to_string(job));
  }

  bool ready = false;
  std::optional<TransportError> failure;
  std::map<JobId, long> pgids;
  std::map<JobId, std::string> out;
  std::map<JobId, std::string> err;
  std::map<JobId, JobExit> exits;
  std::map<JobId, int> exit_reports;
  std::vector<std::string> log;
  std::function<void(JobId, OutputStream)> on_output;
};

// Polls and steps the transport until `done` or a safety timeout.
bool run_until(HostTransport& transport, const std::function<bool()>& done,
               std::chrono::milliseconds limit = 20s) {
  auto give_up = Clock::now() + limit;
  while (!done()) {
    Clock::time_point now = Clock::now();
    if (now >= give_up) return false;
    std::vector<pollfd> fds;
    transport.poll_fds(fds);
    Clock::time_point wake = give_up;
    if (std::optional<Clock::time_point> deadline = transport.deadline()) {
      wake = std::min(wake, *deadline);
    }
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
    if (timeout < 0) timeout = 0;
    // Round up so a deadline a fraction of a millisecond away is not spun on.
    if (wake > now && timeout == 0) timeout = 1;
    poll(fds.data(), fds.size(), static_cast<int>(timeout));
    transport.step(Clock::now());
  }
  return true;
}

// Keeps the loop running for a while with nothing to wait for.
void idle_for(HostTransport& transport, std::chrono::milliseconds duration) {
  run_until(
      transport, [] { return false; }, duration);
}

std::string run_local_sh(const std::string& command) {
  std::string script = command;
  FILE* pipe = popen(("/bin/sh -c " + shell_quote(script)).c_str(), "r");
  std::string text;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, got);
  pclose(pipe);
  return text;
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

class SshTransportTest : public ::testing::Test {
 protected:
  // Starts an sshd in the test directory; the test must RUNNER_REQUIRE_SSHD.
  std::unique_ptr<Sshd> start_sshd(const SshdOptions& options = {},
                                   const std::string& name = "sshd") {
    return Sshd::start(m_dir.file(name), options);
  }

  // Options that trust `sshd` and log in with its client key, no agent.
  SshOptions options_for(const Sshd& sshd) {
    SshOptions options;
    options.identity_files = {sshd.client_key()};
    options.known_hosts = m_dir.write("known_hosts", sshd.known_hosts_line() + "\n");
    options.use_agent = false;
    options.connect_timeout = 10s;
    return options;
  }

  static HostAddress address_of(const Sshd& sshd) {
    HostAddress address;
    address.user = sshd.user();
    address.host = sshd.address();
    address.port = sshd.port();
    return address;
  }

  std::unique_ptr<HostTransport> connect(const Sshd& sshd, const SshOptions& options) {
    auto transport = make_ssh_transport(0, address_of(sshd), options, m_events);
    transport->connect();
    return transport;
  }

  // Connects and waits for host_ready.
  std::unique_ptr<HostTransport> ready_transport(const Sshd& sshd, const SshOptions& options) {
    auto transport = connect(sshd, options);
    bool settled = run_until(*transport, [&] { return m_events.ready || m_events.failure; });
    EXPECT_TRUE(settled);
    EXPECT_TRUE(m_events.ready) << (m_events.failure ? m_events.failure->message : "timeout");
    return transport;
  }

  // Runs one job to its end.
  JobExit run_job(HostTransport& transport, const std::string& command, JobId job = 1) {
    transport.start_job(job, command);
    EXPECT_TRUE(run_until(transport, [&] { return m_events.exits.count(job) > 0; }));
    return m_events.exits[job];
  }

  // Waits for a transport failure and returns it.
  TransportError failure_of(HostTransport& transport) {
    EXPECT_TRUE(run_until(transport, [&] { return m_events.failure || m_events.ready; }));
    EXPECT_FALSE(m_events.ready);
    return m_events.failure.value_or(TransportError{});
  }

  TempDir m_dir;
  Recorder m_events;
};

TEST_F(SshTransportTest, RunsEchoAndReportsOutputAndExit) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  JobExit exit = run_job(*transport, "echo hi");
  EXPECT_EQ(m_events.out[1], "hi\n");
  EXPECT_EQ(m_events.err[1], "");
  EXPECT_EQ(exit.code, 0);
  EXPECT_TRUE(exit.succeeded()) << exit.error;
  EXPECT_GT(m_events.pgids[1], 1);
  EXPECT_EQ(m_events.log, (std::vector<std::string>{"ready", "started 1", "exited 1"}));
}

TEST_F(SshTransportTest, ReportsExitCode) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  JobExit exit = run_job(*transport, "exit 3");
  EXPECT_EQ(exit.code, 3);
  EXPECT_EQ(exit.signal, "");
  EXPECT_EQ(exit.error, "");
  EXPECT_FALSE(exit.succeeded());
}

TEST_F(SshTransportTest, KeepsStderrSeparate) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  run_job(*transport, "echo to-out; echo to-err >&2; echo more-out");
  EXPECT_EQ(m_events.out[1], "to-out\nmore-out\n");
  EXPECT_EQ(m_events.err[1], "to-err\n");
}

TEST_F(SshTransportTest, RunsNastyCommandExactlyAsWritten) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  std::string command =
      "printf '%s|' 'single '\\''quoted'\\''' \"dollar \\$HOME\" 'back\\slash' \"tab\tx\"\n"
      "echo 'multi\nline'; echo \"arith $((6 * 7))\"; echo '`not run`' \"a\\\\b\"";
  JobExit exit = run_job(*transport, command);
  EXPECT_TRUE(exit.succeeded()) << exit.error << m_events.err[1];
  EXPECT_EQ(m_events.out[1], run_local_sh(command));
  EXPECT_NE(m_events.out[1].find("single 'quoted'|dollar $HOME|back\\slash|"), std::string::npos);
}

TEST_F(SshTransportTest, StreamsLargeOutputCompletely) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  JobExit exit = run_job(*transport, "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo done >&2");
  EXPECT_TRUE(exit.succeeded()) << exit.error;
  EXPECT_EQ(m_events.out[1].size(), 3000001u);
  EXPECT_EQ(m_events.out[1].find_first_not_of('x'), 3000000u);
  EXPECT_EQ(m_events.err[1], "done\n");
}

TEST_F(SshTransportTest, ReportsPgidOfTheRemoteProcessGroup) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  run_job(*transport, "ps -o pgid= $$");
  ASSERT_TRUE(m_events.pgids.count(1));
  EXPECT_EQ(std::stol(m_events.out[1]), m_events.pgids[1]);
}

TEST_F(SshTransportTest, LoginShellNoiseIsOutputAfterStart) {
  // Start-up files of the login shell may print before the wrapper runs.
  SshdOptions sshd_options;
  sshd_options.extra_config =
      "ForceCommand echo noise from startup; eval \"$SSH_ORIGINAL_COMMAND\"";
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  std::vector<std::string> seen_at_stdout;
  m_events.on_output = [&](JobId job, OutputStream stream) {
    if (stream == OutputStream::out) seen_at_stdout.push_back(m_events.log.back());
  };
  JobExit exit = run_job(*transport, "echo job");
  EXPECT_TRUE(exit.succeeded()) << exit.error;
  EXPECT_EQ(m_events.out[1], "noise from startup\njob\n");
  EXPECT_GT(m_events.pgids[1], 1);
  ASSERT_FALSE(seen_at_stdout.empty());
  EXPECT_EQ(seen_at_stdout.front(), "started 1") << "output came before job_started";
}

TEST_F(SshTransportTest, ManyJobsOverSeveralConnectionsWhenMaxSessionsIsSmall) {
  SshdOptions sshd_options;
  sshd_options.max_sessions = 3;
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  constexpr int k_jobs = 20;
  for (JobId job = 1; job <= k_jobs; ++job) {
    // $PPID is the sshd process that serves the job's connection.
    transport->start_job(job, "echo job " + std::to_string(job) + " $PPID; sleep 0.2");
  }
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.exits.size() == k_jobs; }))
      << m_events.exits.size() << " jobs ended";
  std::set<std::string> servers;
  for (JobId job = 1; job <= k_jobs; ++job) {
    EXPECT_TRUE(m_events.exits[job].succeeded()) << job << ": " << m_events.exits[job].error;
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

TEST_F(SshTransportTest, OneConnectionSufficesForFewJobs) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  for (JobId job = 1; job <= 5; ++job) transport->start_job(job, "echo $PPID; sleep 0.1");
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.exits.size() == 5; }));
  std::set<std::string> servers;
  for (JobId job = 1; job <= 5; ++job) servers.insert(m_events.out[job]);
  EXPECT_EQ(servers.size(), 1u);
}

TEST_F(SshTransportTest, SignalEndsJobAndItsChildren) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  transport->start_job(1, "sleep 60 & echo $!; wait");
  ASSERT_TRUE(run_until(*transport, [&] {
    return m_events.pgids.count(1) && m_events.out[1].find('\n') != std::string::npos;
  }));
  pid_t child = std::stoi(m_events.out[1]);
  ASSERT_TRUE(testing::process_running(child));
  transport->signal_job(1, SIGTERM);
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.exits.count(1) > 0; }));
  EXPECT_EQ(m_events.exits[1].signal, "TERM");
  EXPECT_FALSE(m_events.exits[1].succeeded());
  EXPECT_EQ(m_events.exits[1].error, "");
  auto give_up = Clock::now() + 5s;
  while (testing::process_running(child) && Clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(testing::process_running(child)) << "the job's child survived";
  EXPECT_TRUE(testing::running_group_members(m_events.pgids[1]).empty());
}

TEST_F(SshTransportTest, SignalReachesJobWhenItsConnectionIsFull) {
  SshdOptions sshd_options;
  sshd_options.max_sessions = 1;
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  transport->start_job(1, "sleep 60");
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.pgids.count(1) > 0; }));
  transport->signal_job(1, SIGKILL);
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.exits.count(1) > 0; }));
  EXPECT_EQ(m_events.exits[1].signal, "KILL");
}

TEST_F(SshTransportTest, SignalBeforeStartCancelsTheJob) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  transport->start_job(1, "touch " + m_dir.file("ran"));
  transport->signal_job(1, SIGTERM);
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.exits.count(1) > 0; }));
  EXPECT_EQ(m_events.exits[1].signal, "TERM");
  EXPECT_NE(m_events.exits[1].error.find("before it started"), std::string::npos);
  EXPECT_EQ(m_events.pgids.count(1), 0u);
  EXPECT_EQ(access(m_dir.file("ran").c_str(), F_OK), -1);
}

TEST_F(SshTransportTest, UnknownHostKeyIsRefusedWithTheFix) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.known_hosts = m_dir.write("empty_known_hosts", "");
  auto transport = connect(*sshd, options);
  TransportError error = failure_of(*transport);
  EXPECT_EQ(error.kind, TransportErrorKind::host_key);
  EXPECT_NE(error.message.find("ssh-keyscan -p " + std::to_string(sshd->port()) + " 127.0.0.1 >> " +
                               options.known_hosts),
            std::string::npos)
      << error.message;
  EXPECT_NE(error.message.find("--accept-new-host-keys"), std::string::npos);
  EXPECT_EQ(read_text(options.known_hosts), "");
}

TEST_F(SshTransportTest, AcceptNewHostKeyRecordsItAndConnects) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.known_hosts = m_dir.write("new_known_hosts", "# mine, no newline at end");
  options.accept_new_host_keys = true;
  auto transport = ready_transport(*sshd, options);
  EXPECT_EQ(read_text(options.known_hosts),
            "# mine, no newline at end\n" + sshd->known_hosts_line() + "\n");

  // The recorded key is now known: a strict transport connects too.
  Recorder second_events;
  options.accept_new_host_keys = false;
  auto second = make_ssh_transport(1, address_of(*sshd), options, second_events);
  second->connect();
  ASSERT_TRUE(run_until(*second, [&] { return second_events.ready || second_events.failure; }));
  EXPECT_TRUE(second_events.ready) << second_events.failure->message;
}

TEST_F(SshTransportTest, ChangedHostKeyIsAlwaysRefused) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  generate_key(m_dir.file("other_host_key"), "ed25519");
  std::istringstream other(read_text(m_dir.file("other_host_key.pub")));
  std::string type, blob;
  other >> type >> blob;
  std::string name = "[127.0.0.1]:" + std::to_string(sshd->port());
  SshOptions options = options_for(*sshd);
  options.known_hosts = m_dir.write("changed_known_hosts", name + " " + type + " " + blob + "\n");
  options.accept_new_host_keys = true;
  auto transport = connect(*sshd, options);
  TransportError error = failure_of(*transport);
  EXPECT_EQ(error.kind, TransportErrorKind::host_key);
  EXPECT_NE(error.message.find("has changed"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("man-in-the-middle"), std::string::npos);
  EXPECT_NE(error.message.find("ssh-keygen -f " + options.known_hosts + " -R '" + name + "'"),
            std::string::npos);
  EXPECT_EQ(read_text(options.known_hosts), name + " " + type + " " + blob + "\n");
}

TEST_F(SshTransportTest, HashedKnownHostsEntryMatches) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  std::string command = "ssh-keygen -H -f " + shell_quote(options.known_hosts) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  ASSERT_EQ(read_text(options.known_hosts).rfind("|1|", 0), 0u) << "the entry was not hashed";
  auto transport = ready_transport(*sshd, options);
}

TEST_F(SshTransportTest, NegotiatesTheKeyTypeKnownHostsHolds) {
  // The server also has an ECDSA key, which libssh2 would negotiate first;
  // known_hosts holds only the ed25519 key.
  generate_key(m_dir.file("ecdsa_host_key"), "ecdsa");
  SshdOptions sshd_options;
  sshd_options.extra_config = "HostKey " + m_dir.file("ecdsa_host_key");
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
}

TEST_F(SshTransportTest, UnauthorizedKeyFailsListingWhatWasTried) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string stranger = m_dir.file("stranger_ed25519");
  generate_key(stranger, "ed25519");
  SshOptions options = options_for(*sshd);
  options.identity_files = {stranger, m_dir.file("missing_key")};
  auto transport = connect(*sshd, options);
  TransportError error = failure_of(*transport);
  EXPECT_EQ(error.kind, TransportErrorKind::auth);
  EXPECT_NE(error.message.find("tried " + stranger), std::string::npos) << error.message;
  EXPECT_NE(error.message.find(m_dir.file("missing_key") + " (no such file)"), std::string::npos);
  EXPECT_NE(error.message.find("authorized_keys"), std::string::npos);
}

TEST_F(SshTransportTest, EncryptedKeyIsSkippedWithANote) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string locked = m_dir.file("locked_ed25519");
  generate_key(locked, "ed25519", "secret passphrase");
  SshOptions options = options_for(*sshd);
  options.identity_files = {locked};
  auto transport = connect(*sshd, options);
  TransportError error = failure_of(*transport);
  EXPECT_EQ(error.kind, TransportErrorKind::auth);
  EXPECT_NE(error.message.find(locked + " (encrypted"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("ssh-agent"), std::string::npos);
}

TEST_F(SshTransportTest, RsaKeyFailureRecommendsEd25519) {
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
  auto transport = connect(*sshd, options);
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.failure || m_events.ready; }));
  if (m_events.ready) GTEST_SKIP() << "this server still accepts ssh-rsa signatures";
  EXPECT_EQ(m_events.failure->kind, TransportErrorKind::auth);
  EXPECT_NE(m_events.failure->message.find("RSA"), std::string::npos) << m_events.failure->message;
  EXPECT_NE(m_events.failure->message.find("ed25519"), std::string::npos);
}

TEST_F(SshTransportTest, AgentIdentityAuthenticates) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  std::string socket = m_dir.file("agent.sock");
  pid_t agent = fork();
  if (agent == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execlp("ssh-agent", "ssh-agent", "-D", "-a", socket.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 500 && access(socket.c_str(), F_OK) != 0; ++i)
    std::this_thread::sleep_for(10ms);
  std::string add = "SSH_AUTH_SOCK=" + shell_quote(socket) + " ssh-add " +
                    shell_quote(sshd->client_key()) + " >/dev/null 2>&1";
  int added = std::system(add.c_str());
  std::string stranger = m_dir.file("stranger_ed25519");
  generate_key(stranger, "ed25519");

  SshOptions options = options_for(*sshd);
  options.use_agent = true;
  options.agent_socket = socket;
  options.identity_files = {stranger};
  auto transport = connect(*sshd, options);
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.failure || m_events.ready; }));
  kill(agent, SIGTERM);
  waitpid(agent, nullptr, 0);
  ASSERT_EQ(added, 0);
  EXPECT_TRUE(m_events.ready) << m_events.failure->message;
  JobExit exit = run_job(*transport, "echo via agent");
  EXPECT_EQ(m_events.out[1], "via agent\n");
}

TEST_F(SshTransportTest, ClosedPortIsAConnectError) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length), 0);
  int port = ntohs(addr.sin_port);
  close(fd);

  HostAddress address;
  address.host = "127.0.0.1";
  address.port = port;
  SshOptions options;
  options.use_agent = false;
  options.known_hosts = m_dir.write("known_hosts", "");
  options.identity_files = {m_dir.file("none")};
  auto transport = make_ssh_transport(0, address, options, m_events);
  transport->connect();
  TransportError error = failure_of(*transport);
  EXPECT_EQ(error.kind, TransportErrorKind::connect);
  EXPECT_EQ(error.message, "127.0.0.1:" + std::to_string(port) + ": connection refused");
}

TEST_F(SshTransportTest, ServerThatNeverAnswersTimesOut) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length), 0);

  HostAddress address;
  address.host = "127.0.0.1";
  address.port = ntohs(addr.sin_port);
  SshOptions options;
  options.use_agent = false;
  options.known_hosts = m_dir.write("known_hosts", "");
  options.connect_timeout = 300ms;
  auto transport = make_ssh_transport(0, address, options, m_events);
  transport->connect();
  TransportError error = failure_of(*transport);
  close(fd);
  EXPECT_EQ(error.kind, TransportErrorKind::timeout);
  EXPECT_NE(error.message.find("timed out after 300 ms"), std::string::npos) << error.message;
}

TEST_F(SshTransportTest, KilledServerLosesRunningJobsThenFailsHost) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  transport->start_job(1, "sleep 60");
  transport->start_job(2, "sleep 60");
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.pgids.size() == 2; }));
  sshd->stop();
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.failure.has_value(); }));
  EXPECT_EQ(m_events.failure->kind, TransportErrorKind::disconnected);
  for (JobId job : {1, 2}) {
    EXPECT_TRUE(m_events.exits[job].lost);
    EXPECT_FALSE(m_events.exits[job].error.empty());
    EXPECT_EQ(m_events.exit_reports[job], 1);
  }
  EXPECT_EQ(m_events.log.back(), "failed");

  // Later jobs are refused, not lost.
  transport->start_job(3, "echo late");
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.exits.count(3) > 0; }));
  EXPECT_FALSE(m_events.exits[3].lost);
  EXPECT_FALSE(m_events.exits[3].error.empty());
}

TEST_F(SshTransportTest, SilentServerIsDetectedByKeepalive) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.keepalive_interval = 1s;
  options.keepalive_count_max = 1;
  auto transport = ready_transport(*sshd, options);
  transport->start_job(1, "sleep 60");
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.pgids.count(1) > 0; }));
  sshd->pause_sessions();
  bool failed = run_until(
      *transport, [&] { return m_events.failure.has_value(); }, 10s);
  sshd->resume_sessions();
  ASSERT_TRUE(failed);
  EXPECT_EQ(m_events.failure->kind, TransportErrorKind::disconnected);
  EXPECT_NE(m_events.failure->message.find("keepalive"), std::string::npos)
      << m_events.failure->message;
  EXPECT_TRUE(m_events.exits[1].lost);
}

TEST_F(SshTransportTest, QuietJobOutlivesKeepaliveInterval) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  SshOptions options = options_for(*sshd);
  options.keepalive_interval = 1s;
  options.keepalive_count_max = 2;
  auto transport = ready_transport(*sshd, options);
  JobExit exit = run_job(*transport, "sleep 3.5; echo awake");
  EXPECT_TRUE(exit.succeeded()) << exit.error;
  EXPECT_EQ(m_events.out[1], "awake\n");
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(SshTransportTest, IdleConnectionAnswersServerKeepalives) {
  // sshd drops a client that leaves two keepalive requests unanswered.
  SshdOptions sshd_options;
  sshd_options.extra_config = "ClientAliveInterval 1\nClientAliveCountMax 1";
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  run_job(*transport, "echo $PPID", 1);
  idle_for(*transport, 5000ms);
  run_job(*transport, "echo $PPID", 2);
  EXPECT_TRUE(m_events.exits[2].succeeded()) << m_events.exits[2].error;
  EXPECT_EQ(m_events.out[1], m_events.out[2]) << "the idle connection was dropped";
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(SshTransportTest, DroppedIdleConnectionIsReplaced) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  run_job(*transport, "echo $PPID", 1);
  sshd->kill_sessions();
  idle_for(*transport, 200ms);
  JobExit exit = run_job(*transport, "echo $PPID", 2);
  EXPECT_TRUE(exit.succeeded()) << exit.error;
  EXPECT_NE(m_events.out[1], m_events.out[2]);
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(SshTransportTest, BurstOfHandshakesSurvivesMaxStartups) {
  SshdOptions sshd_options;
  sshd_options.max_sessions = 1;
  sshd_options.max_startups = "1:100:1";
  auto sshd = start_sshd(sshd_options);
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  constexpr int k_jobs = 6;
  for (JobId job = 1; job <= k_jobs; ++job) transport->start_job(job, "echo $PPID; sleep 0.3");
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.exits.size() == k_jobs; }));
  std::set<std::string> servers;
  for (JobId job = 1; job <= k_jobs; ++job) {
    EXPECT_TRUE(m_events.exits[job].succeeded()) << m_events.exits[job].error;
    servers.insert(m_events.out[job]);
  }
  EXPECT_GT(servers.size(), 1u);
  EXPECT_FALSE(m_events.failure.has_value());
}

TEST_F(SshTransportTest, FleetOfServersSharesOneIdentity) {
  auto first = start_sshd({}, "node1");
  RUNNER_REQUIRE_SSHD(first);
  SshdOptions shared;
  shared.client_key = first->client_key();
  auto second = start_sshd(shared, "node2");
  ASSERT_TRUE(second);
  std::string known_hosts = m_dir.write(
      "fleet_known_hosts", first->known_hosts_line() + "\n" + second->known_hosts_line() + "\n");
  SshOptions options;
  options.use_agent = false;
  options.identity_files = {first->client_key()};
  options.known_hosts = known_hosts;
  Recorder events_2;
  auto transport_1 = make_ssh_transport(0, address_of(*first), options, m_events);
  auto transport_2 = make_ssh_transport(1, address_of(*second), options, events_2);
  transport_1->connect();
  transport_2->connect();
  ASSERT_TRUE(run_until(*transport_1, [&] { return m_events.ready || m_events.failure; }));
  ASSERT_TRUE(run_until(*transport_2, [&] { return events_2.ready || events_2.failure; }));
  ASSERT_TRUE(m_events.ready);
  ASSERT_TRUE(events_2.ready);
  run_job(*transport_1, "echo one");
  transport_2->start_job(7, "echo two");
  ASSERT_TRUE(run_until(*transport_2, [&] { return events_2.exits.count(7) > 0; }));
  EXPECT_EQ(m_events.out[1], "one\n");
  EXPECT_EQ(events_2.out[7], "two\n");
}

TEST_F(SshTransportTest, ShutdownClosesOnceJobsEnd) {
  auto sshd = start_sshd();
  RUNNER_REQUIRE_SSHD(sshd);
  auto transport = ready_transport(*sshd, options_for(*sshd));
  transport->start_job(1, "sleep 0.3; echo finished");
  ASSERT_TRUE(run_until(*transport, [&] { return m_events.pgids.count(1) > 0; }));
  transport->shutdown();
  EXPECT_FALSE(transport->idle());
  ASSERT_TRUE(run_until(*transport, [&] { return transport->idle(); }));
  EXPECT_EQ(m_events.out[1], "finished\n");
  EXPECT_TRUE(m_events.exits[1].succeeded());
  EXPECT_FALSE(m_events.failure.has_value());
}

}  // namespace
}  // namespace runner
