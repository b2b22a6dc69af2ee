// The real binary reaching real sshd instances on 127.0.0.1 through a
// test-made OpenSSH configuration (--ssh-config, never ~/.ssh): aliases from
// Host patterns and Include, ProxyJump, ProxyCommand, host-key policies,
// agent and key files, encrypted keys without a terminal, and sshd's
// MaxSessions.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/ssh_agent.h"
#include "support/sshd.h"
#include "support/temp_dir.h"
#include "support/terminal_run.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::Ci;
using testing::count;
using testing::TerminalRun;

using namespace std::chrono_literals;
using testing::ProcessResult;
using testing::Sshd;
using testing::SshdOptions;
using testing::TempDir;

bool make_key(const std::string& path, const std::string& passphrase = "") {
  return testing::run_process({{"ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C",
                                "runner-test", "-f", path}})
             .status == 0;
}

struct SshConfigRun : ::testing::Test {
  TempDir dir;
  // Its known_hosts lists every host started.
  testing::LoopbackFleet fleet{dir};

  // Options for a host that accepts only `locked`, a new key encrypted with
  // `passphrase`.
  SshdOptions locked_key(const std::string& passphrase) {
    EXPECT_TRUE(make_key(dir.file("locked"), passphrase));
    SshdOptions options;
    options.client_key = dir.file("locked");
    return options;
  }

  // Runs three jobs on host "behind" of the ssh config `config`, and checks
  // that they reached `target` through `bastion` (whose sshd logs at DEBUG1).
  void expect_jobs_reach_behind(const std::string& config, const Sshd& target,
                                const Sshd& bastion) {
    dir.write("hosts.yaml", "- hostname: behind\n  slots: 2\n");
    dir.write("queue.yaml",
              "- command: echo job <<i>> reached port ${SSH_CONNECTION##* }\n"
              "  i: [1, 2, 3]\n");
    ProcessResult r = runner({"queue", "--ssh-config", config});
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_EQ(count(r.out, "reached port " + std::to_string(target.port())), 3) << r.out;
    EXPECT_NE(bastion.log().find("target 127.0.0.1 port " + std::to_string(target.port())),
              std::string::npos)
        << "not forwarded by the jump host:\n"
        << bastion.log();
  }

  // An ssh config in which "behind" (`target`) is reached by a ProxyCommand
  // that relays through "bastion" with `ssh -W`; returns its path.
  std::string write_relay_config(const Sshd& target, const Sshd& bastion) {
    std::string config = dir.file("ssh_config");
    dir.write("ssh_config",
              fleet.config_block("behind", target,
                                 "  ProxyCommand ssh -F " + config + " -W %h:%p bastion\n") +
                  fleet.config_block("bastion", bastion, "  BatchMode yes\n"));
    return config;
  }

  ProcessResult runner(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    auto spec = testing::runner_spec(std::move(args), dir.path());
    for (auto& [name, value] : env) spec.env[name] = value;
    return testing::run_process(spec);
  }
};

// Starts one more host of the fleet as `var`, or skips the test without sshd.
#define START_OR_SKIP(var, ...)       \
  Sshd* var = fleet.add(__VA_ARGS__); \
  RUNNER_REQUIRE_SSHD(var)

TEST_F(SshConfigRun, AliasesFromHostPatternsAndIncludeRunJobs) {
  START_OR_SKIP(a);
  START_OR_SKIP(b);
  dir.write("ssh_config.d/ports.conf", "Host gpu-a\n  Port " + std::to_string(a->port()) +
                                           "\nHost gpu-b\n  Port " + std::to_string(b->port()) +
                                           "\n");
  dir.write("ssh_config", "Include " + dir.file("ssh_config.d") +
                              "/*.conf\n"
                              "Host gpu-*\n  HostName 127.0.0.1\n  User " +
                              a->user() + "\n  IdentityFile " + fleet.key() +
                              "\n  UserKnownHostsFile " + fleet.known_hosts_file() +
                              "\n  StrictHostKeyChecking yes\n");
  dir.write("hosts.yaml", "- hostname: [gpu-a, gpu-b]\n  slots: 2\n");
  // Broadcast: it waits for both hosts, so a fast host cannot take every
  // job before the other is connected; one job on each of the 4 slots.
  dir.write("queue.yaml", "- command: echo <<hostname>> port ${SSH_CONNECTION##* }\n");
  ProcessResult r = runner({"broadcast", "--ssh-config", dir.file("ssh_config")});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("gpu-a port " + std::to_string(a->port())), std::string::npos) << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("gpu-b port " + std::to_string(b->port())), std::string::npos) << r.out;
  EXPECT_EQ(count(testing::job_lines(r.out), " port "), 4);
}

TEST_F(SshConfigRun, ProxyJumpChainRunsJobsThroughTheJumpHost) {
  SshdOptions logged;
  logged.log_level = "DEBUG1";
  START_OR_SKIP(jump, logged);
  START_OR_SKIP(target);
  dir.write("ssh_config", fleet.config_block("behind", *target, "  ProxyJump bastion\n") +
                              fleet.config_block("bastion", *jump));
  expect_jobs_reach_behind(dir.file("ssh_config"), *target, *jump);
}

TEST_F(SshConfigRun, ProxyCommandRunsJobsThroughItsRelay) {
  SshdOptions logged;
  logged.log_level = "DEBUG1";
  START_OR_SKIP(bastion, logged);
  START_OR_SKIP(target);
  expect_jobs_reach_behind(write_relay_config(*target, *bastion), *target, *bastion);
}

TEST_F(SshConfigRun, CtrlCAtTheTerminalLeavesTheProxyCommandAlone) {
  START_OR_SKIP(bastion);
  START_OR_SKIP(target);
  std::string config = write_relay_config(*target, *bastion);
  dir.write("hosts.yaml", "- behind\n");
  dir.write("queue.yaml", "- echo started; sleep 1; echo finished\n- echo never\n");

  TerminalRun run(dir, {"queue", "--ssh-config", config}, Ci::kept);
  ASSERT_TRUE(run.started());
  bool started = run.read_until("started", 20s);
  if (started) {
    // To the terminal's foreground group: runner, not its relay.
    EXPECT_EQ(run.type("\x03"), 1);
  }
  run.read_to_end(20s);
  int status = run.wait(5s);
  const std::string& seen = run.seen();
  ASSERT_TRUE(started) << seen;
  EXPECT_NE(seen.find("interrupt again"), std::string::npos) << seen;
  EXPECT_NE(seen.find("] finished"), std::string::npos) << "the running job was lost:\n" << seen;
  EXPECT_EQ(seen.find("never"), std::string::npos) << seen;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "status " << status << "\n"
                                                               << seen;
}

TEST_F(SshConfigRun, HostKeyPolicyComesFromTheConfig) {
  START_OR_SKIP(host);
  dir.write("hosts.yaml", "- node\n");
  dir.write("queue.yaml", "- echo reached\n");
  auto run_with = [&](const std::string& policy) {
    dir.write("ssh_config",
              fleet.config_block("node", *host, "  StrictHostKeyChecking " + policy + "\n"));
    return runner({"queue", "--ssh-config", dir.file("ssh_config")});
  };

  dir.write("known_hosts", "");
  ProcessResult refused = run_with("yes");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("node"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("host key not known"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("StrictHostKeyChecking is yes"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("ssh-keyscan -p " + std::to_string(host->port()) + " 127.0.0.1"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(dir.read("known_hosts"), "");

  ProcessResult accepted = run_with("accept-new");
  EXPECT_EQ(accepted.status, 0) << accepted.err;
  EXPECT_NE(accepted.out.find("] reached"), std::string::npos);
  EXPECT_EQ(dir.read("known_hosts"), host->known_hosts_line() + "\n");

  // Another key for the same [host]:port: refused under every policy.
  ASSERT_TRUE(make_key(dir.file("impostor")));
  std::string impostor = dir.read("impostor.pub");
  std::string line =
      "[127.0.0.1]:" + std::to_string(host->port()) + " " + impostor.substr(0, impostor.rfind(' '));
  for (std::string policy : {"no", "accept-new"}) {
    dir.write("known_hosts", line + "\n");
    dir.write("queue.yaml", "- echo reached\n");
    ProcessResult changed = run_with(policy);
    EXPECT_EQ(changed.status, 1) << policy;
    EXPECT_NE(changed.err.find("REMOTE HOST IDENTIFICATION HAS CHANGED"), std::string::npos)
        << changed.err;
    EXPECT_NE(changed.err.find("ssh-keygen -f " + dir.file("known_hosts") + " -R"),
              std::string::npos)
        << changed.err;
    EXPECT_EQ(dir.read("known_hosts"), line + "\n");
  }
}

TEST_F(SshConfigRun, AgentIdentityAuthenticates) {
  START_OR_SKIP(host);
  testing::SshAgent agent(dir.file("agent.sock"));
  ASSERT_TRUE(agent.add(fleet.key()));
  // The configured key file does not exist: only the agent can log in.
  dir.write("ssh_config", fleet.config_block("node", *host, "", dir.file("absent_key")));
  dir.write("hosts.yaml", "- node\n");
  dir.write("queue.yaml", "- echo via agent\n");
  ProcessResult r = runner({"queue", "--ssh-config", dir.file("ssh_config")},
                           {{"SSH_AUTH_SOCK", agent.socket()}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] via agent"), std::string::npos) << r.out;
}

TEST_F(SshConfigRun, EncryptedKeyWithoutATerminalFailsClearly) {
  START_OR_SKIP(host, locked_key("a passphrase"));
  dir.write("ssh_config", fleet.config_block("node", *host));
  dir.write("hosts.yaml", "- node\n");
  dir.write("queue.yaml", "- touch " + dir.file("ran") + "\n");
  ProcessResult r = runner({"queue", "--ssh-config", dir.file("ssh_config")});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("node"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir.file("locked") + " (encrypted, and there is no terminal to ask for "
                                            "its passphrase: add it to ssh-agent with ssh-add"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
}

TEST_F(SshConfigRun, EncryptedKeyPassphraseIsAskedOnTheTerminalOnce) {
  START_OR_SKIP(first, locked_key("open sesame"));
  START_OR_SKIP(second);
  dir.write("ssh_config", fleet.config_block("one", *first) + fleet.config_block("two", *second));
  dir.write("hosts.yaml", "- one\n- two\n");
  // Each job lasts long enough that the second host, connecting once the
  // passphrase is known, gets the other one.
  dir.write("queue.yaml",
            "- sleep 1; echo ran on <<hostname>>\n- sleep 1; echo ran on <<hostname>>\n");

  // The status line is on, as on a user's terminal.
  TerminalRun run(dir, {"queue", "--ssh-config", dir.file("ssh_config")}, Ci::unset);
  ASSERT_TRUE(run.started());
  bool asked = run.read_until("Enter passphrase for key '" + dir.file("locked") + "': ", 20s);
  if (asked) {
    std::string answer = "open sesame\n";
    EXPECT_EQ(run.type(answer), static_cast<ssize_t>(answer.size()));
  }
  run.read_to_end(20s);
  int status = run.wait(5s);
  const std::string& seen = run.seen();
  ASSERT_TRUE(asked) << seen;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << seen;
  EXPECT_EQ(count(seen, "Enter passphrase"), 1) << "asked once for the key, not per host:\n"
                                                << seen;
  EXPECT_EQ(seen.find("open sesame"), std::string::npos) << "the passphrase was echoed";
  // The prompt has its line to itself: the status line was erased first.
  std::string before_prompt = seen.substr(0, seen.find("Enter passphrase"));
  std::string on_its_line = before_prompt.substr(before_prompt.find_last_of("\r\n") + 1);
  EXPECT_TRUE(on_its_line.empty() || on_its_line == "\x1b[K")
      << "the prompt shares its line with: " << on_its_line;
  EXPECT_NE(seen.find("ran on one"), std::string::npos) << seen;
  EXPECT_NE(seen.find("ran on two"), std::string::npos) << seen;
}

TEST_F(SshConfigRun, InterruptAtThePassphrasePromptStopsTheRun) {
  START_OR_SKIP(host, locked_key("open sesame"));
  dir.write("ssh_config", fleet.config_block("one", *host));
  dir.write("hosts.yaml", "- one\n");
  dir.write("queue.yaml", "- touch " + dir.file("ran") + "\n");

  TerminalRun run(dir, {"queue", "--ssh-config", dir.file("ssh_config")}, Ci::kept);
  ASSERT_TRUE(run.started());
  bool interrupted = run.read_until("Enter passphrase", 20s);
  if (interrupted) {
    EXPECT_EQ(run.type("\x03"), 1);  // Ctrl-C
  }
  run.read_to_end(20s);
  int status = run.wait(5s);
  const std::string& seen = run.seen();
  ASSERT_TRUE(interrupted) << seen;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "status " << status << "\n"
                                                               << seen;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
}

TEST_F(SshConfigRun, KeyTheServerRejectsIsNamedWithTheFix) {
  START_OR_SKIP(host);
  ASSERT_TRUE(make_key(dir.file("stranger")));
  dir.write("ssh_config", fleet.config_block("node", *host, "", dir.file("stranger")));
  dir.write("hosts.yaml", "- node\n");
  dir.write("queue.yaml", "- echo never\n");
  ProcessResult r = runner({"queue", "--ssh-config", dir.file("ssh_config")});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("node"), std::string::npos) << r.err;
  EXPECT_NE(
      r.err.find("authentication as " + host->user() + " failed (tried " + dir.file("stranger")),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ssh-copy-id"), std::string::npos) << r.err;
}

TEST_F(SshConfigRun, MaxSessionsTwoServesAHostWithSixSlots) {
  SshdOptions options;
  options.max_sessions = 2;
  START_OR_SKIP(host, options);
  dir.write("ssh_config", fleet.config_block("node", *host));
  dir.write("hosts.yaml", "- hostname: node\n  slots: 6\n");
  std::string running = dir.file("running");
  std::filesystem::create_directory(running);
  dir.write("queue.yaml",
            "- command: >-\n"
            "    touch " +
                running +
                "/<<i>>; sleep 1.5;\n"
                "    echo job <<i>> saw $(ls " +
                running +
                " | wc -l) via ${SSH_CONNECTION#* }\n"
                "  i: [1, 2, 3, 4, 5, 6]\n");
  ProcessResult r = runner({"queue", "--ssh-config", dir.file("ssh_config")});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  std::set<std::string> connections;
  int most = 0;
  std::istringstream lines(testing::job_lines(r.out));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line.substr(line.find("] ") + 2));
    std::string job, id, saw, via, server;
    int seen = 0;
    words >> job >> id >> saw >> seen >> via >> server;
    most = std::max(most, seen);
    connections.insert(server);
  }
  EXPECT_EQ(most, 6) << "all six slots should run at once:\n" << r.out;
  EXPECT_EQ(connections.size(), 3u) << "MaxSessions 2 needs three connections:\n" << r.out;
}

TEST_F(SshConfigRun, BrokenSshConfigStopsBeforeAnythingRuns) {
  START_OR_SKIP(host);
  dir.write("ssh_config",
            "Host node\n  Port " + std::to_string(host->port()) + "\n  NoSuchOption yes\n");
  dir.write("hosts.yaml", "- node\n");
  dir.write("queue.yaml", "- touch " + dir.file("ran") + "\n");
  ProcessResult r = runner({"queue", "--ssh-config", dir.file("ssh_config")});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(dir.file("ssh_config") + ":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nosuchoption"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
  EXPECT_NE(dir.read("queue.yaml").find("touch"), std::string::npos);
}

TEST_F(SshConfigRun, WithoutTheSshClientTheBuiltinParserIsUsedAndSaysSo) {
  START_OR_SKIP(host);
  dir.write("ssh_config", fleet.config_block("node", *host));
  dir.write("hosts.yaml", "- node\n");
  dir.write("queue.yaml", "- echo resolved anyway\n");
  // No `ssh` on this PATH (the remote side has its own).
  ProcessResult r =
      runner({"queue", "--ssh-config", dir.file("ssh_config")}, {{"PATH", dir.file("empty-bin")}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] resolved anyway"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("built-in parser"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace runner
