// Services (`service:`) run by the real binary over real sshd: a
// coordinator whose ready line carries its address, a server waited for by
// its port (and one on every host, given the coordinator's address), a
// client that talks to them and writes a TSV, teardown that leaves nothing
// running (what outlives the TERM too) and then runs each service's
// `after:` command, a server waited for on a port that a TIME_WAIT holds,
// and a server that dies.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "runner/config/tcp_sockets.h"
#include "support/loopback_fleet.h"
#include "support/loopback_port.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

constexpr const char* k_coordinator =
    "import http.server, sys\n"
    "server = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\n"
    "print('booting', flush=True)\n"
    "print('Started at 127.0.0.1:%d' % server.server_port, flush=True)\n"
    "server.serve_forever()\n";

struct Services : ::testing::Test {
  TempDir dir;
  testing::LoopbackFleet fleet{dir};

  void start_hosts(int n) {
    if (fleet.start(n)) return;
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
};

TEST_F(Services, ACoordinatorServersAndAClientRunFromOneQueueAndAreTornDown) {
  start_hosts(2);
  if (HasFatalFailure() || IsSkipped()) return;
  fleet.write_hosts(2);
  std::string coordinator = dir.write("coordinator.py", k_coordinator);
  int port = testing::unused_port();
  std::string d = dir.path();
  dir.write("queue.yaml",
            "- command: /usr/bin/python3 -u " + coordinator + "\n"
            "  service: dht\n"
            "  ready_log: 'Started at (?<addr>\\S+)'\n"
            "  after: touch " + d + "/after-dht\n"
            "- command: cd " + d + " && /usr/bin/python3 -m http.server " + std::to_string(port) +
            " --bind 127.0.0.1\n"
            "  service: server\n"
            "  ready_port: " + std::to_string(port) + "\n"
            "  after: touch " + d + "/after-server\n"
            "- command: >-\n"
            "    /usr/bin/python3 -c \"import urllib.request as u;\n"
            "    a = u.urlopen('http://<<dht.addr>>/').status;\n"
            "    b = u.urlopen('http://127.0.0.1:" + std::to_string(port) + "/').status;\n"
            "    open('" + d + "/results.tsv', 'w').write('coordinator\\t%d\\nserver\\t%d\\n' % (a, b))\"\n"
            "  outputs: " + d + "/results.tsv\n");
  ProcessResult r = testing::run_process(fleet.runner({"queue"}));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(dir.read("results.tsv"), "coordinator\t200\nserver\t200\n");
  // Collected from the client's host with `outputs:`.
  EXPECT_EQ(dir.read("queue.runner/outputs/3" + d + "/results.tsv"), dir.read("results.tsv"));
  EXPECT_NE(r.err.find("service #1 (dht) ["), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is ready after"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("<<dht.addr>> = 127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("after-dht")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("after-server")));
  // Nothing of theirs is left on the hosts (one machine here).
  EXPECT_EQ(testing::live_processes_running(coordinator), 0);
  EXPECT_EQ(testing::live_processes_running("http.server " + std::to_string(port)), 0);
  std::string journal = dir.read("queue.runner/journal.jsonl");
  EXPECT_EQ(testing::count(journal, "\"event\":\"service_ready\""), 2) << journal;
  EXPECT_NE(journal.find("\"service\":\"dht\""), std::string::npos);
}

TEST_F(Services, AServerIsNotReadyWhileItsPortHoldsOnlyATimeWait) {
  start_hosts(1);
  if (HasFatalFailure() || IsSkipped()) return;
  fleet.write_hosts(2);
  // The last run's server closed its connection first: its port is in
  // TIME_WAIT, which /proc/net/tcp lists, and nothing listens there.
  int port = testing::port_in_time_wait();
  std::string sockets = testing::sh_output("cat /proc/net/tcp /proc/net/tcp6");
  ASSERT_EQ(ports_in_use(sockets).count(port), 1u) << sockets;
  ASSERT_EQ(listening_ports(sockets).count(port), 0u) << sockets;
  ASSERT_FALSE(testing::accepts_connections(port));
  std::string p = std::to_string(port);
  dir.write("queue.yaml",
            "- command: sleep 2 && cd " + dir.path() + " && exec /usr/bin/python3 -m http.server " +
            p + " --bind 127.0.0.1\n"
            "  service: server\n"
            "  ready_port: " + p + "\n"
            "- command: >-\n"
            "    /usr/bin/python3 -c \"import urllib.request as u;\n"
            "    print('status', u.urlopen('http://127.0.0.1:" + p + "/').status)\"\n");
  ProcessResult r = testing::run_process(fleet.runner({"queue"}));
  EXPECT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("status 200"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.err.find("Connection refused"), std::string::npos) << r.err;
  EXPECT_EQ(testing::live_processes_running("http.server " + p), 0);
}

TEST_F(Services, OneNotReadyInTimeFailsTheRunAndIsStopped) {
  start_hosts(1);
  if (HasFatalFailure() || IsSkipped()) return;
  fleet.write_hosts(2);
  std::string marker = "sleep " + std::to_string(400 + getpid() % 500) + ".25";
  dir.write("queue.yaml",
            "- command: " + marker + "\n"
            "  service: quiet\n"
            "  ready_log: never printed\n"
            "  ready_timeout: 1s\n"
            "- echo never\n");
  ProcessResult r = testing::run_process(fleet.runner({"queue"}));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("service #1 (quiet)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was not ready within 1s; stopping it"), std::string::npos) << r.err;
  EXPECT_EQ(testing::live_processes_running(marker), 0);
}

TEST_F(Services, InterruptingTwiceWhileAServiceStartsStopsItAndRunsItsAfterCommand) {
  start_hosts(1);
  if (HasFatalFailure() || IsSkipped()) return;
  fleet.write_hosts(2);
  std::string marker = "sleep " + std::to_string(400 + getpid() % 500) + ".75";
  dir.write("queue.yaml",
            "- command: echo starting; " + marker + "\n"
            "  service: slow\n"
            "  ready_log: never printed\n"
            "  after: touch " + dir.file("after-slow") + "\n"
            "- echo never\n");
  testing::Process run(fleet.runner({"queue"}));
  ASSERT_TRUE(run.wait_for_output("starting", std::chrono::seconds(20))) << run.peek_err();
  run.signal(SIGINT);
  ASSERT_TRUE(run.wait_for_output("interrupt again", std::chrono::seconds(5))) << run.peek_err();
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_EQ(testing::live_processes_running(marker), 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("after-slow"))) << r.err;
  EXPECT_EQ(r.out.find("never\n"), std::string::npos) << r.out;
}

TEST_F(Services, WhatOutlivesTheTermOfAStoppedServiceIsKilledBeforeItsAfterCommand) {
  start_hosts(1);
  if (HasFatalFailure() || IsSkipped()) return;
  fleet.write_hosts(2);
  // The service's shell dies of the TERM at once; the program it started
  // ignores TERM and would run on.
  std::string marker = "sleep " + std::to_string(400 + getpid() % 500) + ".5";
  std::string left = dir.file("left-at-after");
  dir.write("queue.yaml",
            "- command: sh -c 'trap \"\" TERM; echo ready; exec " + marker + "'\n"
            "  service: stubborn\n"
            "  ready_log: ready\n"
            "  after: ps -eo args | grep -c '^" + marker + "$' > " + left + "; true\n"
            "- echo done\n");
  ProcessResult r = testing::run_process(fleet.runner({"queue"}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::live_processes_running(marker), 0);
  EXPECT_EQ(dir.read("left-at-after"), "0\n") << r.err;
  for (long pid : testing::live_processes_starting(marker)) ::kill(static_cast<pid_t>(pid), SIGKILL);
}

// hosts.yaml for the fleet's hosts, two slots each, and on each host a
// `peer_port` of its own (they share this machine's addresses).
std::vector<int> write_hosts_with_peer_ports(const testing::LoopbackFleet& fleet,
                                             const TempDir& dir) {
  std::vector<int> ports;
  std::string text;
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    ports.push_back(testing::unused_port());
    text += "- hostname: " + fleet.name(static_cast<int>(i)) + "\n  slots: 2\n  peer_port: " +
            std::to_string(ports.back()) + "\n";
  }
  dir.write("hosts.yaml", text);
  return ports;
}

TEST_F(Services, ACoordinatorAServerOnEveryHostAndAClientFromOneQueue) {
  start_hosts(3);
  if (HasFatalFailure() || IsSkipped()) return;
  std::vector<int> ports = write_hosts_with_peer_ports(fleet, dir);
  std::string coordinator = dir.write("coordinator.py", k_coordinator);
  std::string d = dir.path();
  // Each server serves a folder holding the address it was given.
  std::string client = "import sys, urllib.request as u\n"
                       "rows = ['coordinator\\t%d' % u.urlopen('http://' + sys.argv[1]).status]\n";
  for (int port : ports)
    client += "rows.append('" + std::to_string(port) + "\\t' + u.urlopen('http://127.0.0.1:" +
              std::to_string(port) + "/initial_peer').read().decode().strip())\n";
  client += "open('" + d + "/results.tsv', 'w').write('\\n'.join(rows) + '\\n')\n";
  dir.write("client.py", client);
  dir.write("queue.yaml",
            "- command: /usr/bin/python3 -u " + coordinator + "\n"
            "  service: dht\n"
            "  ready_log: 'Started at (?<addr>\\S+)'\n"
            "- command: >-\n"
            "    mkdir -p " + d + "/peer<<peer_port>> &&\n"
            "    echo <<dht.addr>> > " + d + "/peer<<peer_port>>/initial_peer &&\n"
            "    exec /usr/bin/python3 -m http.server <<peer_port>> --bind 127.0.0.1\n"
            "    --directory " + d + "/peer<<peer_port>>\n"
            "  service: server\n"
            "  every: host\n"
            "  ready_port: <<peer_port>>\n"
            "  after: touch " + d + "/after-<<peer_port>>\n"
            "- command: /usr/bin/python3 " + d + "/client.py <<dht.addr>>\n"
            "  outputs: " + d + "/results.tsv\n");
  ProcessResult r = testing::run_process(fleet.runner({"queue"}));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  std::string results = dir.read("results.tsv");
  EXPECT_EQ(testing::count(results, "coordinator\t200\n"), 1) << results;
  for (int port : ports) {
    EXPECT_NE(results.find(std::to_string(port) + "\t127.0.0.1:"), std::string::npos) << results;
    EXPECT_TRUE(std::filesystem::exists(dir.file("after-" + std::to_string(port)))) << port;
    EXPECT_EQ(testing::live_processes_running("http.server " + std::to_string(port)), 0);
  }
  EXPECT_EQ(testing::live_processes_running(coordinator), 0);
  std::string journal = dir.read("queue.runner/journal.jsonl");
  EXPECT_EQ(testing::count(journal, "\"event\":\"service_ready\""), 4) << journal;
  // One server on each host.
  for (std::size_t i = 0; i < fleet.size(); ++i)
    EXPECT_EQ(testing::count(r.err, "(server) [" + fleet.name(static_cast<int>(i)) + " "), 1)
        << r.err;
}

TEST_F(Services, AServerThatDiesFailsTheRunNothingMoreStartsAndTheOthersAreStopped) {
  start_hosts(2);
  if (HasFatalFailure() || IsSkipped()) return;
  std::vector<int> ports = write_hosts_with_peer_ports(fleet, dir);
  std::string marker = "sleep " + std::to_string(400 + getpid() % 500) + ".5";
  dir.write("queue.yaml",
            "- command: >-\n"
            "    echo up; if [ <<peer_port>> = " + std::to_string(ports[1]) + " ]; then sleep 1;\n"
            "    exit 3; fi; " + marker + "\n"
            "  service: server\n"
            "  every: host\n"
            "  ready_log: up\n"
            "- sleep 3; echo client done\n"
            "- sleep 3; echo client done\n"
            "- sleep 3; echo client done\n"
            "- sleep 3; echo client done\n"
            "- echo never\n");
  ProcessResult r = testing::run_process(fleet.runner({"queue"}));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("service #2 (server) [" + fleet.name(1)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ended before the run did: exit 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no more jobs start"), std::string::npos) << r.err;
  // The two slots left (of four) ran a client each, which finished.
  EXPECT_EQ(testing::count(r.out, "] client done\n"), 2) << r.out;
  EXPECT_EQ(r.out.find("never"), std::string::npos) << r.out;
  EXPECT_EQ(testing::live_processes_running(marker), 0);
}

TEST_F(Services, AServerThatDiesWithRestartStartsAgainOnItsOwnHost) {
  start_hosts(2);
  if (HasFatalFailure() || IsSkipped()) return;
  std::vector<int> ports = write_hosts_with_peer_ports(fleet, dir);
  std::string d = dir.path();
  // The server of the second host dies once, after it was ready.
  dir.write("queue.yaml",
            "- command: >-\n"
            "    echo up; echo <<peer_port>> >> " + d + "/starts;\n"
            "    if [ <<peer_port>> = " + std::to_string(ports[1]) + " ] && [ ! -e " + d +
            "/died ]; then touch " + d + "/died; exit 3; fi; sleep 300\n"
            "  service: server\n"
            "  every: host\n"
            "  restart: on-failure\n"
            "  ready_log: up\n"
            "- sleep 3\n");
  ProcessResult r = testing::run_process(fleet.runner({"queue"}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("starting it again"), std::string::npos) << r.err;
  std::string starts = dir.read("starts");
  EXPECT_EQ(testing::count(starts, std::to_string(ports[1]) + "\n"), 2) << starts;
  EXPECT_EQ(testing::count(starts, std::to_string(ports[0]) + "\n"), 1) << starts;
}

}  // namespace
}  // namespace runner
