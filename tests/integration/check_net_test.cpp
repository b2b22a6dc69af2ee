// `runner check --net` against real sshd instances on 127.0.0.1: each host's
// interfaces, each ordered pair's answering addresses, the tools each host
// has deciding who listens and who probes, and no listener left running.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "runner/config/tcp_sockets.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct CheckNet : ::testing::Test {
  TempDir dir;
  testing::LoopbackFleet fleet{dir};

  ProcessResult check_net() {
    return testing::run_process(fleet.runner({"check", "--net"}));
  }

  // A directory whose programs are the system's `tools`: a PATH with only them.
  std::string path_with(const std::string& name, const std::vector<std::string>& tools) {
    std::string bin = dir.file(name);
    std::filesystem::create_directories(bin);
    for (const std::string& tool : tools) {
      std::string real = testing::sh_output("command -v " + tool);
      if (!real.empty()) real.pop_back();
      if (real.empty()) continue;
      std::filesystem::create_symlink(real, bin + "/" + tool);
    }
    return "PATH=" + bin;
  }

  std::string host_line(const std::string& out, int host) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(fleet.name(host) + ": ", 0) == 0) return line;
    }
    return "";
  }

  std::string pair_line(const std::string& out, int from, int to) {
    std::string start = "  " + fleet.name(from) + " -> " + fleet.name(to) + ": ";
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(start, 0) == 0) return line.substr(start.size());
    }
    return "";
  }

  // The ports the check listened on, from its output.
  std::vector<std::string> listened_ports(const std::string& out) {
    std::vector<std::string> ports;
    for (std::size_t at = out.find("listened on port "); at != std::string::npos;
         at = out.find("listened on port ", at + 1)) {
      ports.push_back(out.substr(at + 17, out.find(',', at) - at - 17));
    }
    return ports;
  }

  // Sockets on the ports the check listened on that are not closed yet
  // (TIME_WAIT included): a multi-node job after the check would take them
  // for ports in use.
  int sockets_left(const std::string& out) {
    std::set<int> ports;
    for (const std::string& port : listened_ports(out)) ports.insert(std::stoi(port));
    std::set<int> in_use = ports_in_use(testing::sh_output("cat /proc/net/tcp /proc/net/tcp6"));
    return static_cast<int>(std::count_if(ports.begin(), ports.end(),
                                          [&](int port) { return in_use.count(port) > 0; }));
  }

  // Processes of this machine whose command line names the check's token,
  // or an `nc -l` on a port the check listened on (nc is not given it).
  // The listeners got KILL before runner ended; a busy machine may take a
  // moment to finish them off, but not their own lifetime (120 s).
  void expect_nothing_left(const std::string& out) {
    testing::wait_until([&] { return listeners_left(out) == 0; }, std::chrono::seconds(5));
    EXPECT_EQ(listeners_left(out), 0);
    EXPECT_EQ(sockets_left(out), 0) << out;
  }

  int listeners_left(const std::string& out) {
    std::vector<std::string> nc_listeners;
    for (const std::string& port : listened_ports(out)) {
      nc_listeners.push_back(std::string("nc\0-l\0-p\0", 9) + port + '\0');
      nc_listeners.push_back(std::string("nc\0-l\0", 6) + port + '\0');
    }
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::ifstream cmdline(entry.path() / "cmdline");
      std::string text((std::istreambuf_iterator<char>(cmdline)), {});
      bool nc = std::any_of(nc_listeners.begin(), nc_listeners.end(), [&](const std::string& l) {
        return text.rfind(l, 0) == 0;
      });
      if (nc || text.find("runner-net-check-") != std::string::npos) ++count;
    }
    return count;
  }
};

const std::vector<std::string> k_basics = {"sh", "cat", "cut", "head", "sleep", "setsid"};

TEST_F(CheckNet, EveryPairOfTheLoopbackFleetReachesTheOtherOnItsMasterAddress) {
  if (!fleet.start(2)) GTEST_SKIP() << "no sshd";
  fleet.write_hosts(1);
  ProcessResult r = check_net();
  EXPECT_EQ(r.status, 0) << r.out << r.err;

  for (int host : {0, 1}) {
    std::string line = host_line(r.out, host);
    EXPECT_EQ(line.rfind(fleet.name(host) + ": read with ", 0), 0u) << r.out;
    EXPECT_NE(line.find(", listened on port "), std::string::npos) << line;
    EXPECT_NE(line.find(", probed with python3"), std::string::npos) << line;
  }
  // Every host's table shows loopback with its prefix.
  int loopback_rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  lo ", 0) == 0 && line.find(" 127.0.0.1/8 ::1/128") != std::string::npos) {
      ++loopback_rows;
    }
  }
  EXPECT_EQ(loopback_rows, 2) << r.out;

  EXPECT_NE(r.out.find("\nreachability (from -> to: the addresses that answered; [master]: the "
                       "master address):\n"),
            std::string::npos)
      << r.out;
  for (auto [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
    std::string pair = pair_line(r.out, from, to);
    EXPECT_EQ(pair.rfind("127.0.0.1 (lo) [master]", 0), 0u) << r.out;
    EXPECT_EQ(pair.find("NONE"), std::string::npos) << pair;
  }
  // The two hosts are one machine: different ports, or one listener would fail.
  EXPECT_NE(host_line(r.out, 0).substr(host_line(r.out, 0).find("port")),
            host_line(r.out, 1).substr(host_line(r.out, 1).find("port")));
  EXPECT_EQ(r.out.find("warnings:"), std::string::npos) << r.out;
  expect_nothing_left(r.out);
}

TEST_F(CheckNet, UsesWhatEachHostHasAndSaysWhichPairsItCouldNotCheck) {
  testing::SshdOptions perl_only;
  perl_only.session_environment = {path_with("perl-bin", [] {
    std::vector<std::string> tools = k_basics;
    tools.push_back("perl");
    return tools;
  }())};
  testing::SshdOptions bash_only;
  bash_only.session_environment = {path_with("bash-bin", [] {
    std::vector<std::string> tools = k_basics;
    tools.insert(tools.end(), {"bash", "timeout"});
    return tools;
  }())};
  testing::SshdOptions nc_only;
  nc_only.session_environment = {path_with("nc-bin", [] {
    std::vector<std::string> tools = k_basics;
    tools.push_back("nc");
    return tools;
  }())};
  if (!fleet.start(1, perl_only) || !fleet.start(1, bash_only) || !fleet.start(1, nc_only)) {
    GTEST_SKIP() << "no sshd";
  }
  for (const char* tool : {"perl", "nc"}) {
    if (testing::sh_output(std::string("command -v ") + tool).empty()) GTEST_SKIP() << "no " << tool;
  }
  fleet.write_hosts(1);
  ProcessResult r = check_net();
  EXPECT_EQ(r.status, 1) << r.out << r.err;

  std::string perl_line = host_line(r.out, 0);
  EXPECT_NE(perl_line.find(", listened on port "), std::string::npos) << r.out;
  EXPECT_NE(perl_line.find(", probed with perl"), std::string::npos) << perl_line;
  std::string bash_line = host_line(r.out, 1);
  EXPECT_NE(bash_line.find(", cannot listen: no python3, perl or nc to listen with, probed with "
                           "bash"),
            std::string::npos)
      << r.out;

  std::string nc_line = host_line(r.out, 2);
  EXPECT_NE(nc_line.find(", listened on port "), std::string::npos) << r.out;
  EXPECT_NE(nc_line.find(", probed with nc"), std::string::npos) << nc_line;

  // Every pair towards a host that listens, with each prober.
  for (auto [from, to] : {std::pair{0, 2}, std::pair{1, 0}, std::pair{1, 2}, std::pair{2, 0}}) {
    EXPECT_EQ(pair_line(r.out, from, to).rfind("127.0.0.1 (lo) [master]", 0), 0u)
        << from << " -> " << to << ":\n" << r.out;
  }
  EXPECT_EQ(pair_line(r.out, 0, 1), "") << r.out;
  EXPECT_EQ(pair_line(r.out, 2, 1), "") << r.out;
  EXPECT_NE(r.out.find("warnings:\n  2 ordered pairs of hosts could not be checked"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("the network between some hosts is unknown"), std::string::npos) << r.err;
  expect_nothing_left(r.out);
}

}  // namespace
}  // namespace runner
