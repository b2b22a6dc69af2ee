// `runner check` against real sshd instances on 127.0.0.1 through a
// test-made ssh configuration: one line per host with how it was reached and
// the GPUs a fake nvidia-smi lists, and the same verdict as `ssh HOST true`;
// `runner hosts --detect`, and what both make of a GPU name that holds
// control characters.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <sstream>

#include "runner/config/hosts.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/small_tmpfs.h"  // setup_required()
#include "support/sshd.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::Sshd;
using testing::SshdOptions;
using testing::TempDir;

struct Check : ::testing::Test {
  TempDir dir;
  testing::LoopbackFleet fleet{dir};

  std::string block(const std::string& alias, const Sshd& sshd, const std::string& extra = "") {
    return fleet.config_block(alias, sshd, "  StrictHostKeyChecking yes\n" + extra);
  }

  // A directory with an `nvidia-smi` that lists two GPUs.
  std::string fake_nvidia_smi() {
    std::string bin = dir.file("fake-bin");
    std::string script = dir.write(
        "fake-bin/nvidia-smi",
        "#!/bin/sh\n"
        "[ \"$1\" = -L ] || exit 2\n"
        "echo 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-11111111-2222-3333-4444-555555555555)'\n"
        "echo 'GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-66666666-7777-8888-9999-000000000000)'\n");
    chmod(script.c_str(), 0755);
    return bin;
  }

  // A directory with an `nvidia-smi` whose one GPU's name holds carriage
  // returns and the YAML that they would make lines of their own: an entry
  // of another host, and the start of the GPU's entry again (a terminal
  // shows only that).
  std::string hostile_nvidia_smi() {
    std::string bin = dir.file("hostile-bin");
    std::string script =
        dir.write("hostile-bin/nvidia-smi",
                  "#!/bin/sh\n"
                  "[ \"$1\" = -L ] || exit 2\n"
                  "printf 'GPU 0: NVIDIA A100\\r- evil.example.org\\r- hostname: gpu-node  # "
                  "(UUID: GPU-11111111-2222-3333-4444-555555555555)\\n'\n");
    chmod(script.c_str(), 0755);
    return bin;
  }

  ProcessResult check(std::vector<std::string> args = {}, const char* command = "check") {
    args.insert(args.begin(), command);
    args.push_back("--ssh-config");
    args.push_back(dir.file("ssh_config"));
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }

  std::string line_of(const std::string& out, const std::string& host) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(host + ": ", 0) == 0) return line;
    }
    return "";
  }
};

// Starts one more host of the fleet as `var`, or skips the test without sshd.
#define START_OR_SKIP(var, ...)       \
  Sshd* var = fleet.add(__VA_ARGS__); \
  RUNNER_REQUIRE_SSHD(var)

TEST_F(Check, PrintsOneLinePerHostAndFailsWhenOneIsUnusable) {
  SshdOptions with_gpus;
  with_gpus.session_environment = {"PATH=" + fake_nvidia_smi() + ":/usr/bin:/bin"};
  START_OR_SKIP(gpu, with_gpus);
  START_OR_SKIP(plain);
  START_OR_SKIP(jump);
  dir.write("ssh_config", block("gpu-node", *gpu) + block("cpu-node", *plain) +
                              block("behind", *gpu, "  ProxyJump bastion\n") +
                              block("bastion", *jump) +
                              "Host closed-node\n  HostName 127.0.0.1\n  Port 1\n  IdentityFile " +
                              fleet.key() + "\n");
  dir.write("hosts.yaml",
            "- hostname: gpu-node\n  gpu: [0, 1]\n- cpu-node\n- behind\n- closed-node\n"
            "- localhost\n");
  ProcessResult r = check();
  EXPECT_EQ(r.status, 1) << r.out << r.err;

  std::string gpu_line = line_of(r.out, "gpu-node");
  EXPECT_EQ(gpu_line.rfind("gpu-node: ok, gpu-node (127.0.0.1:" + std::to_string(gpu->port()) +
                               "), key " + fleet.key() + ", host key known, rtt ",
                           0),
            0u)
      << r.out;
  EXPECT_NE(gpu_line.find(" ms, 2 GPUs: 0 NVIDIA A100-SXM4-80GB, 1 NVIDIA A100-SXM4-80GB"),
            std::string::npos)
      << gpu_line;
  EXPECT_EQ(gpu_line.find("hosts.yaml names"), std::string::npos) << gpu_line;

  std::string cpu_line = line_of(r.out, "cpu-node");
  EXPECT_EQ(cpu_line.rfind("cpu-node: ok, ", 0), 0u) << r.out;
  EXPECT_NE(cpu_line.find(", no nvidia-smi"), std::string::npos) << cpu_line;

  std::string behind_line = line_of(r.out, "behind");
  EXPECT_EQ(behind_line.rfind("behind: ok, behind (via bastion), ", 0), 0u) << r.out;
  EXPECT_NE(behind_line.find("2 GPUs"), std::string::npos) << behind_line;

  std::string closed_line = line_of(r.out, "closed-node");
  EXPECT_EQ(closed_line.rfind("closed-node: FAILED: ", 0), 0u) << r.out;
  EXPECT_NE(closed_line.find("connection refused"), std::string::npos) << closed_line;

  EXPECT_EQ(line_of(r.out, "localhost").rfind("localhost: ok, local, ", 0), 0u) << r.out;

  // In hosts.yaml order, one line each.
  EXPECT_LT(r.out.find("gpu-node: "), r.out.find("cpu-node: "));
  EXPECT_LT(r.out.find("behind: "), r.out.find("closed-node: "));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5) << r.out;
  EXPECT_NE(r.err.find("1 of 5 hosts not usable"), std::string::npos) << r.err;
}

TEST_F(Check, AllUsableExitsZeroAndNamesMissingGpus) {
  SshdOptions with_gpus;
  with_gpus.session_environment = {"PATH=" + fake_nvidia_smi() + ":/usr/bin:/bin"};
  START_OR_SKIP(gpu, with_gpus);
  dir.write("ssh_config", block("gpu-node", *gpu));
  dir.write("hosts.yaml", "- hostname: gpu-node\n  gpu: [0, 1, 2, 3]\n");
  ProcessResult r = check();
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 GPUs: 0 NVIDIA A100-SXM4-80GB, 1 NVIDIA A100-SXM4-80GB, but hosts.yaml "
                       "names gpu 2, 3, which nvidia-smi does not list"),
            std::string::npos)
      << r.out;
}

TEST_F(Check, ReachesWhatSshReachesWithTheSameConfig) {
  if (testing::run_process({{"ssh", "-V"}}).status != 0) GTEST_SKIP() << "no ssh client";
  START_OR_SKIP(good);
  START_OR_SKIP(jump);
  START_OR_SKIP(unknown);
  // The fleet's known_hosts, less `unknown`'s key.
  dir.write("known_hosts", good->known_hosts_line() + "\n" + jump->known_hosts_line() + "\n");
  std::string stranger = dir.file("stranger");
  ASSERT_EQ(testing::run_process({{"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", stranger}})
                .status,
            0);
  dir.write("ssh_config", block("direct", *good) + block("jumped", *good, "  ProxyJump bastion\n") +
                              block("bastion", *jump) + block("unknown-key", *unknown) +
                              fleet.config_block("wrong-key", *good, "", stranger));
  std::vector<std::string> hosts = {"direct", "jumped", "unknown-key", "wrong-key"};
  std::string hosts_yaml;
  for (const std::string& host : hosts) hosts_yaml += "- " + host + "\n";
  dir.write("hosts.yaml", hosts_yaml);
  ProcessResult r = check();
  for (const std::string& host : hosts) {
    testing::ProcessSpec ssh;
    ssh.args = {"ssh", "-F", dir.file("ssh_config"), "-o", "BatchMode=yes", host, "true"};
    ssh.env = {{"SSH_AUTH_SOCK", ""}};
    ssh.cwd = dir.path();
    ProcessResult by_ssh = testing::run_process(ssh);
    bool runner_ok = line_of(r.out, host).rfind(host + ": ok", 0) == 0;
    EXPECT_EQ(runner_ok, by_ssh.status == 0)
        << host << ": ssh said " << by_ssh.status << " " << by_ssh.err << "\nrunner said "
        << line_of(r.out, host);
  }
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(line_of(r.out, "unknown-key").find("host key not known"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "wrong-key").find("authentication as"), std::string::npos) << r.out;
}

TEST_F(Check, HostsDetectGivesEachGpuASlotWithItsUuid) {
  SshdOptions with_gpus;
  with_gpus.session_environment = {"PATH=" + fake_nvidia_smi() + ":/usr/bin:/bin"};
  START_OR_SKIP(gpu, with_gpus);
  START_OR_SKIP(plain);
  dir.write("ssh_config", block("gpu-node", *gpu) + block("cpu-node", *plain));
  ProcessResult r = check({"--detect", "gpu-node", "cpu-node"}, "hosts");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "- hostname: gpu-node  # NVIDIA A100-SXM4-80GB\n  gpu: 0\n"
            "  gpu_uuid: GPU-11111111-2222-3333-4444-555555555555\n"
            "- hostname: gpu-node  # NVIDIA A100-SXM4-80GB\n  gpu: 1\n"
            "  gpu_uuid: GPU-66666666-7777-8888-9999-000000000000\n"
            "- cpu-node  # no nvidia-smi: one slot\n");

  // --write writes that file where there is none, and then refuses to
  // overwrite it, leaving it as it was.
  ProcessResult written = check({"--detect", "gpu-node", "cpu-node", "--write"}, "hosts");
  ASSERT_EQ(written.status, 0) << written.err;
  EXPECT_EQ(dir.read("hosts.yaml"), r.out);
  EXPECT_EQ(check({}).status, 0) << "runner check reads what it wrote";
  ProcessResult again = check({"--detect", "cpu-node", "--write"}, "hosts");
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("hosts.yaml: exists already"), std::string::npos) << again.err;
  EXPECT_EQ(dir.read("hosts.yaml"), r.out);
}

TEST_F(Check, HostsDetectWritesNothingWhenAHostDoesNotAnswer) {
  START_OR_SKIP(plain);
  dir.write("ssh_config", block("cpu-node", *plain) +
                              "Host closed-node\n  HostName 127.0.0.1\n  Port 1\n  IdentityFile " +
                              fleet.key() + "\n");
  ProcessResult r = check({"--detect", "cpu-node", "closed-node", "--write"}, "hosts");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("closed-node: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 2 hosts did not answer; nothing written"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("hosts.yaml")));
}

// PyYAML's reading of `path` (as Pegasus reads hosts.yaml): each entry's
// host name, one a line; nullopt without python3's yaml module.
std::optional<std::string> pyyaml_host_names(const std::string& path) {
  ProcessResult r =
      testing::run_process({{"python3", "-c",
                             "import sys, yaml\n"
                             "for entry in yaml.safe_load(open(sys.argv[1], 'rb')):\n"
                             "    print(entry['hostname'] if isinstance(entry, dict) else entry)\n",
                             path}});
  if (r.status != 0 && r.err.find("No module named") != std::string::npos) return std::nullopt;
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

TEST_F(Check, WhatANodeSaysOfItsGpusIsEscapedWhereItIsPrintedOrWritten) {
  SshdOptions hostile;
  hostile.session_environment = {"PATH=" + hostile_nvidia_smi() + ":/usr/bin:/bin"};
  START_OR_SKIP(gpu, hostile);
  dir.write("ssh_config", block("gpu-node", *gpu));
  ProcessResult written = check({"--detect", "gpu-node", "--write"}, "hosts");
  ASSERT_EQ(written.status, 0) << written.err;
  std::string yaml = dir.read("hosts.yaml");
  EXPECT_EQ(yaml.find_first_of("\r\x1b"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("# NVIDIA A100\\r- evil.example.org\\r- hostname: gpu-node  #\n"),
            std::string::npos)
      << yaml;
  // Exactly the host detected, to runner (yaml-cpp) and to PyYAML.
  Result<Fleet> parsed = parse_hosts(yaml, "hosts.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().located_message();
  const Fleet& fleet = *parsed;
  ASSERT_EQ(fleet.hosts.size(), 1u) << yaml;
  EXPECT_EQ(fleet.hosts[0].name, "gpu-node");
  ASSERT_EQ(fleet.slots.size(), 1u) << yaml;
  EXPECT_EQ(fleet.slots[0].params,
            (Params{{"gpu", "0"}, {"gpu_uuid", "GPU-11111111-2222-3333-4444-555555555555"}}));
  std::optional<std::string> pyyaml = pyyaml_host_names(dir.file("hosts.yaml"));
  if (pyyaml)
    EXPECT_EQ(*pyyaml, "gpu-node\n");
  else if (testing::setup_required())
    ADD_FAILURE() << "python3's yaml module is missing but CI=true requires it";

  // What `runner check` prints of the same answer, on one line.
  ProcessResult r = check();
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find_first_of("\r\x1b"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "gpu-node").find(", 1 GPU: 0 NVIDIA A100\\r- evil.example.org\\r"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace runner
