// The scripts of `runner check --net`, parsed from fixtures and run for
// real by /bin/sh on 127.0.0.1 with every tool this machine has: a
// listener answers its token, a prober reports it, a closed port and a
// port that never answers are said to be so.
#include "runner/probe/net_check_scripts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "support/loopback_port.h"
#include "support/process.h"

namespace runner {
namespace {

using testing::Process;
using testing::ProcessSpec;

TEST(HostSurvey, ReadsToolsInterfacesAndPortsFromItsSections) {
  HostSurvey survey = parse_host_survey(
      "tool python3\ntool bash\n"
      "== ip -o addr\n"
      "4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\\ valid_lft forever\n"
      "== /proc/net/tcp\n"
      "  sl  local_address rem_address   st tx_q\n"
      "   0: 00000000:7338\n"
      "   0: 00000000000000000000000000000000:1F90\n");
  EXPECT_EQ(survey.tools, (std::vector<std::string>{"python3", "bash"}));
  EXPECT_EQ(survey.interfaces_from, "ip -o addr");
  EXPECT_EQ(survey.addresses, (std::vector<InterfaceAddress>{{"eth0", "192.0.2.2", 24, false}}));
  EXPECT_EQ(survey.ports_in_use, (std::set<int>{29496, 8080}));
}

TEST(HostSurvey, ReadsIfconfigOrProcNetWhenThatIsWhatTheHostHad) {
  HostSurvey ifconfig = parse_host_survey(
      "== ifconfig -a\neth0: flags=4163<UP>  mtu 1500\n        inet 10.0.0.5  netmask "
      "255.255.255.0\n== /proc/net/tcp\n");
  EXPECT_EQ(ifconfig.interfaces_from, "ifconfig -a");
  EXPECT_EQ(ifconfig.addresses, (std::vector<InterfaceAddress>{{"eth0", "10.0.0.5", 24, false}}));
  EXPECT_TRUE(ifconfig.tools.empty());

  HostSurvey proc = parse_host_survey(
      "tool nc\n== /proc/net/if_inet6\n00000000000000000000000000000001 01 80 10 80 lo\n"
      "== /proc/net/fib_trie\n== /proc/net/route\n== /proc/net/tcp\n");
  EXPECT_EQ(proc.interfaces_from, "/proc/net");
  EXPECT_EQ(proc.addresses, (std::vector<InterfaceAddress>{{"lo", "::1", 128, true}}));

  HostSurvey nothing = parse_host_survey("");
  EXPECT_EQ(nothing.interfaces_from, "");
  EXPECT_TRUE(nothing.addresses.empty());
  EXPECT_TRUE(nothing.ports_in_use.empty());
}

TEST(HostSurvey, RunOnThisMachineFindsLoopbackAndItsTools) {
  HostSurvey survey = parse_host_survey(testing::sh_output(host_survey_command()));
  EXPECT_FALSE(survey.interfaces_from.empty());
  EXPECT_NE(std::find(survey.addresses.begin(), survey.addresses.end(),
                      InterfaceAddress{"lo", "127.0.0.1", 8, false}),
            survey.addresses.end());
  EXPECT_NE(std::find(survey.tools.begin(), survey.tools.end(), "bash"), survey.tools.end());
}

TEST(ToolChoice, PrefersPythonThenPerlThenBashOrNc) {
  using Tools = std::vector<std::string>;
  EXPECT_EQ(listener_tool({"nc", "perl", "python3"}), "python3");
  EXPECT_EQ(listener_tool({"nc", "perl", "bash"}), "perl");
  EXPECT_EQ(listener_tool({"bash", "nc"}), "nc");
  EXPECT_EQ(listener_tool({"bash", "timeout"}), std::nullopt);
  EXPECT_EQ(prober_tool({"nc", "bash", "python3"}), "python3");
  EXPECT_EQ(prober_tool({"nc", "bash", "perl"}), "perl");
  EXPECT_EQ(prober_tool({"nc", "bash"}), "bash");
  EXPECT_EQ(prober_tool({"nc"}), "nc");
  EXPECT_EQ(prober_tool(Tools{}), std::nullopt);
}

TEST(ProbeAnswers, ReadsEveryProbeLineAndNothingElse) {
  EXPECT_EQ(parse_probe_answers("probe 192.0.2.3 29500 runner-net-check-1\n"
                                "probe fd00::3 29500 Connection refused \r\n"
                                "probe node02 29501 no answer\n"
                                "probe node02 29501x no answer\n"
                                "probe node02\n"
                                "Traceback (most recent call last):\n"),
            (std::vector<ProbeAnswer>{{"192.0.2.3", 29500, "runner-net-check-1"},
                                      {"fd00::3", 29500, "Connection refused"},
                                      {"node02", 29501, "no answer"}}));
}

bool has_program(const std::string& name) {
  return testing::sh_output("command -v " + name + " >/dev/null && echo yes") == "yes\n";
}

// The tools of this machine, each as the only one the scripts may use.
std::vector<std::string> available(std::vector<std::string> tools) {
  tools.erase(std::remove_if(tools.begin(), tools.end(),
                             [](const std::string& tool) { return !has_program(tool); }),
              tools.end());
  return tools;
}

// What `prober` said of each of `ports` on 127.0.0.1, expecting `token`.
std::vector<std::string> probe_with(const std::string& prober, const std::vector<int>& ports,
                                    const std::string& token) {
  std::vector<ProbeTarget> targets;
  for (int port : ports) targets.push_back({"127.0.0.1", port, token});
  std::string out = testing::sh_output(prober_command(
      prober, available({"python3", "perl", "bash", "nc", "timeout"}), targets, 1));
  std::vector<std::string> said;
  for (int port : ports) {
    std::string what = "missing from:\n" + out;
    for (const ProbeAnswer& answer : parse_probe_answers(out)) {
      if (answer.address == "127.0.0.1" && answer.port == port) what = answer.said;
    }
    said.push_back(what);
  }
  return said;
}

const std::vector<std::string> k_probers = {"python3", "perl", "bash", "nc"};

// Sockets of this machine on local `port` in TIME_WAIT: what the side that
// closes a connection first keeps for a minute.
int time_waits_on(int port) {
  char local_port[8];
  std::snprintf(local_port, sizeof local_port, ":%04X ", port);
  std::string listing = testing::sh_output("cat /proc/net/tcp /proc/net/tcp6");
  int count = 0;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if ((local + " ").find(local_port) != std::string::npos && state == "06") ++count;
  }
  return count;
}

TEST(ListenerAndProber, EveryProberGetsTheTokenOfEveryListener) {
  for (const std::string& listener : available({"python3", "perl", "nc"})) {
    int port = testing::unused_port();
    ProcessSpec spec;
    spec.args = {"/bin/sh", "-c", listener_command(listener, port, "token-of-" + listener, 30)};
    Process listening(spec);
    ASSERT_TRUE(listening.wait_for_output("listening\n", std::chrono::seconds(10))) << listener;
    // nc gives no sign that it listens.
    if (listener == "nc") usleep(300 * 1000);
    for (const std::string& prober : available(k_probers)) {
      EXPECT_EQ(probe_with(prober, {port}, "token-of-" + listener),
                std::vector<std::string>{"token-of-" + listener})
          << listener << " listening, " << prober << " probing";
    }
    // The probers closed first: the port is free for what follows the check.
    EXPECT_EQ(time_waits_on(port), 0) << listener;
  }
}

TEST(ListenerAndProber, EveryProberSaysWhyAClosedOrSilentPortGaveNoToken) {
  int silent_port = 0;
  int silent = testing::silent_listener(silent_port);
  for (const std::string& prober : available(k_probers)) {
    std::vector<std::string> said = probe_with(prober, {testing::unused_port(), silent_port}, "t");
    // nc says nothing of why.
    if (prober != "nc") {
      ASSERT_GE(said.size(), 2u);
      EXPECT_NE(said[0].find("refused"), std::string::npos) << prober << said[0];
    }
    EXPECT_FALSE(said[0].empty()) << prober;
    EXPECT_NE(said[0], "t") << prober;
    EXPECT_FALSE(said[1].empty()) << prober;
    EXPECT_NE(said[1], "t") << prober;
    EXPECT_EQ(said[1].find("missing"), std::string::npos) << prober << said[1];
  }
  close(silent);
}

TEST(Listener, SaysWhyItCannotListenOnAPortInUse) {
  int port = 0;
  int busy = testing::silent_listener(port);
  for (const std::string& listener : available({"python3", "perl"})) {
    testing::ProcessResult r = testing::run_process(
        {{"/bin/sh", "-c", listener_command(listener, port, "t", 30)}});
    EXPECT_NE(r.status, 0) << listener;
    EXPECT_NE(r.out.find("cannot listen on port " + std::to_string(port) + ": "),
              std::string::npos)
        << listener << ": " << r.out << r.err;
  }
  close(busy);
}

TEST(Listener, EndsByItselfAfterItsLifetime) {
  for (const std::string& listener : available({"python3", "perl", "nc"})) {
    testing::ProcessResult r = testing::run_process(
        {{"/bin/sh", "-c", listener_command(listener, testing::unused_port(), "t", 1)}, "", {}, "",
         std::chrono::milliseconds(10000)});
    EXPECT_FALSE(r.timed_out) << listener;
  }
}

}  // namespace
}  // namespace runner
