// ShellHostOps over a scripted executor that answers in shell text: the
// commands it runs on a host, byte for byte, and how it reads their output
// into typed answers (a network survey, a leftover check, removals in
// turn, an own command's output). Real processes: local_executor_test.cpp.
#include "runner/exec/shell_host_ops.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/exec/shell.h"
#include "runner/probe/gpu_listing.h"
#include "runner/probe/net_check_scripts.h"
#include "support/no_executor_events.h"

namespace runner {
namespace {

// A host whose shell prints scripted text: each command started ends at
// the next step() with its answer.
class ShellTextHost final : public Executor {
 public:
  struct Answer {
    JobExit exit = JobExit::exited(0);
    std::string out;
    std::string err;
  };

  explicit ShellTextHost(ExecutorEvents& events) : Executor(0, events) {}

  std::function<Answer(const std::string& command)> answer = [](const std::string&) {
    return Answer{};
  };
  std::vector<std::string> commands;  // every command started, in order
  std::vector<std::pair<TaskId, int>> signals;  // every signal sent, in order

  // The host is lost: what runs ends as lost.
  void lose() { report_failed(Status{ErrorKind::disconnected, "dropped"}); }

  void connect() override {}
  void start_task(TaskId task, const std::string& command) override {
    commands.push_back(command);
    m_started.emplace_back(task, command);
  }
  void start_task_reading(TaskId task, const std::string& command, const std::string&) override {
    start_task(task, command);
  }
  void signal_task(TaskId task, int signal) override { signals.emplace_back(task, signal); }
  void shutdown() override {}
  bool idle() const override { return m_started.empty(); }
  std::string address() const override { return "10.0.0.1"; }
  void poll_fds(std::vector<pollfd>&) override {}
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }
  void step(Clock::time_point) override {
    for (auto& [task, command] : std::exchange(m_started, {})) {
      Answer said = answer(command);
      if (!said.out.empty()) report_output(task, OutputStream::out, said.out);
      if (!said.err.empty()) report_output(task, OutputStream::err, said.err);
      report_exited(task, said.exit);
    }
  }

 private:
  std::vector<std::pair<TaskId, std::string>> m_started;
};

class ShellHostOpsTest : public ::testing::Test {
 protected:
  // Steps the host until nothing runs there.
  void settle() {
    for (int i = 0; i < 100 && !m_host.idle(); ++i) m_host.step(Clock::time_point{});
  }

  enum class Then { command_ends, host_is_lost };
  // What the survey `ask` answers once its command ended, or once the
  // host is lost while it runs.
  template <typename Survey>
  std::optional<Result<Survey>> survey_by(
      void (ShellHostOps::*ask)(std::function<void(Result<Survey>)>),
      Then then = Then::command_ends) {
    std::optional<Result<Survey>> survey;
    (m_ops.*ask)([&](Result<Survey> said) { survey = std::move(said); });
    if (then == Then::host_is_lost)
      m_host.lose();
    else
      settle();
    return survey;
  }

  testing::NoExecutorEvents m_events;
  ShellTextHost m_host{m_events};
  ShellHostOps m_ops{m_host};
};

TEST_F(ShellHostOpsTest, SurveyReadsTheHostsPortsListenersAndRoutableAddresses) {
  m_host.answer = [](const std::string&) {
    // 29500 (0x733C) listens; 29501 (0x733D) is in TIME_WAIT; 8080
    // (0x1F90) listens on IPv6.
    return ShellTextHost::Answer{
        .out =
            "  sl  local_address rem_address   st tx_queue rx_queue\n"
            "   0: 00000000:733C 00000000:0000 0A 00000000:00000000\n"
            "   1: 0100007F:733D 0100007F:9C40 06 00000000:00000000\n"
            "  sl  local_address                         remote_address                        "
            "st\n"
            "   0: 00000000000000000000000000000000:1F90 "
            "00000000000000000000000000000000:0000 0A\n"
            "runner-addresses\n"
            "192.168.5.5 127.0.0.1 10.1.1.1 ::1 fe80::1\n"};
  };
  std::optional<Result<NetworkSurvey>> survey = survey_by(&ShellHostOps::survey_network);
  ASSERT_EQ(m_host.commands,
            (std::vector<std::string>{"cat /proc/net/tcp /proc/net/tcp6 2>/dev/null; echo "
                                      "runner-addresses; hostname -I 2>/dev/null; true"}));
  ASSERT_TRUE(survey && *survey) << (survey ? survey->status().message() : "no answer");
  EXPECT_EQ((*survey)->ports_in_use, (std::set<int>{8080, 29500, 29501}));
  EXPECT_EQ((*survey)->listening_ports, (std::set<int>{8080, 29500}));
  EXPECT_EQ((*survey)->addresses, (std::vector<std::string>{"192.168.5.5", "10.1.1.1", "fe80::1"}));
}

TEST_F(ShellHostOpsTest, SurveyOfAHostWithoutProcOrHostnameFindsNothing) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.out = "runner-addresses\n"};
  };
  std::optional<Result<NetworkSurvey>> survey = survey_by(&ShellHostOps::survey_network);
  ASSERT_TRUE(survey && *survey);
  EXPECT_TRUE((*survey)->ports_in_use.empty());
  EXPECT_TRUE((*survey)->addresses.empty());
}

TEST_F(ShellHostOpsTest, SurveyThatFailsSaysWhatTheHostSaidAndALostOneIsADisconnection) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.exit = JobExit::exited(2), .err = "sh: cannot fork"};
  };
  std::optional<Result<NetworkSurvey>> survey = survey_by(&ShellHostOps::survey_network);
  ASSERT_TRUE(survey && !*survey);
  EXPECT_EQ(survey->status().kind(), ErrorKind::failed);
  EXPECT_EQ(survey->status().message(), "reading /proc/net/tcp failed: sh: cannot fork");

  survey = survey_by(&ShellHostOps::survey_network, Then::host_is_lost);
  ASSERT_TRUE(survey && !*survey);
  EXPECT_EQ(survey->status().kind(), ErrorKind::disconnected);
}

TEST_F(ShellHostOpsTest, InterfaceSurveyRunsTheCheckSurveyAndReadsToolsInterfacesAndPorts) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{
        .out = "tool python3\ntool bash\n"
               "== ip -o addr\n"
               "4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\\ valid_lft "
               "forever\n"
               "== /proc/net/tcp\n"
               "  sl  local_address rem_address   st tx_q\n"
               "   0: 00000000:733C\n"};
  };
  std::optional<Result<HostSurvey>> survey = survey_by(&ShellHostOps::survey_interfaces);
  ASSERT_EQ(m_host.commands, (std::vector<std::string>{host_survey_command()}));
  ASSERT_TRUE(survey && *survey) << (survey ? survey->status().message() : "no answer");
  EXPECT_EQ((*survey)->tools, (std::vector<std::string>{"python3", "bash"}));
  EXPECT_EQ((*survey)->interfaces_from, "ip -o addr");
  EXPECT_EQ((*survey)->addresses,
            (std::vector<InterfaceAddress>{{"eth0", "192.0.2.2", 24, false}}));
  EXPECT_EQ((*survey)->ports_in_use, (std::set<int>{29500}));
}

TEST_F(ShellHostOpsTest, InterfaceSurveyThatCouldNotRunSaysWhyAndALostOneIsADisconnection) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.exit = JobExit::failed_because("sh: cannot fork"),
                                 .out = "tool python3\n"};
  };
  std::optional<Result<HostSurvey>> survey = survey_by(&ShellHostOps::survey_interfaces);
  ASSERT_TRUE(survey && !*survey);
  EXPECT_EQ(survey->status().kind(), ErrorKind::failed);
  EXPECT_EQ(survey->status().message(), "sh: cannot fork");

  survey = survey_by(&ShellHostOps::survey_interfaces, Then::host_is_lost);
  ASSERT_TRUE(survey && !*survey);
  EXPECT_EQ(survey->status().kind(), ErrorKind::disconnected);
  EXPECT_EQ(survey->status().message(), "dropped");
}

TEST_F(ShellHostOpsTest, ConnectionProbesRunTheProberAndReadWhatEachTargetAnswered) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.out = "probe 192.0.2.3 29500 runner-net-check-1\n"
                                        "probe fd00::3 29500 Connection refused\n"};
  };
  std::vector<ProbeTarget> targets{{"192.0.2.3", 29500, "runner-net-check-1"},
                                   {"fd00::3", 29500, "runner-net-check-1"}};
  std::optional<ConnectionProbes> probes;
  m_ops.probe_connections("python3", {"python3", "bash"}, targets, 3,
                          [&](const ConnectionProbes& said) { probes = said; });
  settle();
  ASSERT_EQ(m_host.commands, (std::vector<std::string>{
                                 prober_command("python3", {"python3", "bash"}, targets, 3)}));
  ASSERT_TRUE(probes);
  EXPECT_FALSE(probes->lost);
  EXPECT_EQ(probes->answers,
            (std::vector<ProbeAnswer>{{"192.0.2.3", 29500, "runner-net-check-1"},
                                      {"fd00::3", 29500, "Connection refused"}}));

  probes.reset();
  m_ops.probe_connections("python3", {"python3"}, targets, 3,
                          [&](const ConnectionProbes& said) { probes = said; });
  m_host.lose();
  ASSERT_TRUE(probes);
  EXPECT_TRUE(probes->lost);
  EXPECT_TRUE(probes->answers.empty());
}

TEST_F(ShellHostOpsTest, ALookAtGpusRunsNvidiaSmiAndReadsWhatEachGpuHolds) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{
        .out = "0, GPU-aa, 5000\n1, GPU-bb, 10\n---\nGPU-aa, 4242\nGPU-aa, 4343\n"};
  };
  std::optional<GpuLookAnswer> look;
  m_ops.look_at_gpus([&](const GpuLookAnswer& answer) { look = answer; });
  settle();
  EXPECT_EQ(m_host.commands, std::vector<std::string>{k_gpu_usage});
  ASSERT_TRUE(look && look->usage);
  ASSERT_EQ(look->usage->size(), 2u);
  EXPECT_EQ(look->usage->at("0").memory_used_mib, 5000);
  EXPECT_EQ(look->usage->at("0").processes, 2);
  EXPECT_EQ(look->usage->at("1").memory_used_mib, 10);
  EXPECT_EQ(look->usage->at("1").processes, 0);
}

TEST_F(ShellHostOpsTest, ALookAtGpusThatFailsOrPrintsSomethingElseSaysHowItEndedAndItsFirstLine) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.exit = JobExit::exited(127),
                                 .err = "sh: nvidia-smi: not found\nmore\n"};
  };
  std::optional<GpuLookAnswer> look;
  m_ops.look_at_gpus([&](const GpuLookAnswer& answer) { look = answer; });
  settle();
  ASSERT_TRUE(look);
  EXPECT_FALSE(look->usage);
  EXPECT_EQ(look->exit.code(), 127);
  EXPECT_EQ(look->said, "sh: nvidia-smi: not found");

  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.out = "NVIDIA-SMI has failed\n"};
  };
  look.reset();
  m_ops.look_at_gpus([&](const GpuLookAnswer& answer) { look = answer; });
  settle();
  ASSERT_TRUE(look);
  EXPECT_FALSE(look->usage);
  EXPECT_TRUE(look->exit.succeeded());
  EXPECT_EQ(look->said, "NVIDIA-SMI has failed");
}

TEST_F(ShellHostOpsTest, KillLeftoversRunsTheKillOfTheGroupsAndReadsWhichWereKilledOrKept) {
  std::vector<ProcessGroup> groups{{12, "mark-1"}, {13, "mark-2"}, {14, ""}};
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.out = "killed 12\nkept 13\nkilled 1x\nkilledd 5\nkept\n"};
  };
  std::optional<LeftoverCheck> check;
  m_ops.kill_leftovers(groups, [&](const LeftoverCheck& said) { check = said; });
  settle();
  EXPECT_EQ(m_host.commands, (std::vector<std::string>{kill_leftovers_command(groups)}));
  ASSERT_TRUE(check);
  EXPECT_EQ(check->killed, std::vector<long>{12});
  EXPECT_EQ(check->kept, std::vector<long>{13});
  EXPECT_TRUE(check->error.empty()) << check->error;
  EXPECT_FALSE(check->lost);
}

TEST_F(ShellHostOpsTest, KillLeftoversThatFailsSaysWhatTheShellSaidOrThatTheHostWasLost) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{
        .exit = JobExit::exited(1), .out = "killed 12\n", .err = "no /proc"};
  };
  std::optional<LeftoverCheck> check;
  m_ops.kill_leftovers({{12, "m"}}, [&](const LeftoverCheck& said) { check = said; });
  settle();
  ASSERT_TRUE(check);
  EXPECT_EQ(check->killed, std::vector<long>{12});
  EXPECT_EQ(check->error, "killed 12\nno /proc");
  EXPECT_FALSE(check->lost);

  check.reset();
  m_ops.kill_leftovers({{12, "m"}}, [&](const LeftoverCheck& said) { check = said; });
  m_host.lose();
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->lost);
  EXPECT_EQ(check->error, "dropped");
}

TEST_F(ShellHostOpsTest, RemoveFilesRemovesEachByItsExactNameInTurnAndStopsAtAFailure) {
  m_ops.remove_files({"a b", "it's", "-rf"}, [](const JobExit&, const std::string&) {});
  settle();
  EXPECT_EQ(m_host.commands, (std::vector<std::string>{"rm -f -- 'a b' 'it'\\''s' '-rf'"}));

  // Long lists take several commands, each one after the one before it
  // succeeded.
  std::vector<std::string> paths(3000, std::string(20, 'x'));
  m_host.commands.clear();
  int removals = 0;
  m_host.answer = [&](const std::string&) {
    return ShellTextHost::Answer{.exit = JobExit::exited(++removals == 2 ? 1 : 0),
                                 .out = "rm: cannot remove"};
  };
  std::optional<JobExit> exit;
  std::string output;
  m_ops.remove_files(paths, [&](const JobExit& e, const std::string& o) {
    exit = e;
    output = o;
  });
  settle();
  ASSERT_EQ(m_host.commands.size(), 2u) << "the removals after a failure do not run";
  for (const std::string& command : m_host.commands) {
    EXPECT_EQ(command.rfind("rm -f -- ", 0), 0u);
    EXPECT_LE(command.size(), 32u * 1024);
  }
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code(), 1);
  EXPECT_EQ(output, "rm: cannot remove");
}

TEST_F(ShellHostOpsTest, StopTransfersKillsThePutsCommandsUnderWayAndOnlyThose) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.exit = JobExit::exited(1), .err = "find: denied"};
  };
  std::optional<PutResult> put;
  m_ops.put_files({{"/here", "x.bin", 1, 0, 0644}}, "to", [&](const PutResult& r) { put = r; });
  m_ops.run_command("not a transfer", [](const JobExit&, const std::string&) {});
  ASSERT_EQ(m_host.commands.size(), 2u);
  EXPECT_EQ(m_host.commands[0], host_listing_command("to", {{"/here", "x.bin", 1, 0, 0644}}));
  m_ops.stop_transfers();
  EXPECT_EQ(m_host.signals,
            (std::vector<std::pair<TaskId, int>>{{k_first_own_command_id, SIGKILL}}));
  settle();
  ASSERT_TRUE(put);
  EXPECT_EQ(put->error, "listing what is under to failed: find: denied");
  m_ops.stop_transfers();
  EXPECT_EQ(m_host.signals.size(), 1u) << "a transfer that ended is not stopped again";
}

TEST_F(ShellHostOpsTest, AnOwnCommandKeepsItsFirst64KiBOrStreamsItsStdout) {
  m_host.answer = [](const std::string&) {
    return ShellTextHost::Answer{.out = std::string(70000, 'o'), .err = "warning"};
  };
  std::string kept;
  m_ops.run_command("chatty", [&](const JobExit&, const std::string& output) { kept = output; });
  settle();
  EXPECT_EQ(kept, std::string(65536, 'o'));

  std::string streamed;
  m_ops.run_command_streaming(
      "chatty", [&](std::string_view bytes) { streamed.append(bytes); },
      [&](const JobExit&, const std::string& output) { kept = output; });
  settle();
  EXPECT_EQ(streamed, std::string(70000, 'o'));
  EXPECT_EQ(kept, "warning");
}

}  // namespace
}  // namespace runner
