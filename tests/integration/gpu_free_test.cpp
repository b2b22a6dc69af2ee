// `gpu_free:` with the real binary on a local host and a fake nvidia-smi
// whose answer the test changes: a job waits while another process holds
// its GPU and starts once the GPU is free. An nvidia-smi that hangs, on a
// local host and over sshd, is killed at the limit, said once, and its
// host's jobs run unchecked.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <unistd.h>

#include <filesystem>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

TEST(GpuFreeRun, AJobWaitsWhileItsGpuIsBusyAndStartsWhenItIsFree) {
  testing::TempDir dir;
  // GPU 0 holds 5000 MiB while `busy` exists; GPU 1 is always busy.
  std::string fake = dir.write(
      "bin/nvidia-smi",
      "#!/bin/sh\n"
      "case \"$1\" in\n"
      "  --query-gpu=*) if [ -e \"$BUSY\" ]; then echo '0, GPU-0, 5000'; else echo '0, GPU-0, 3'; fi\n"
      "                 echo '1, GPU-1, 9000' ;;\n"
      "  --query-compute-apps=*) [ -e \"$BUSY\" ] && echo 'GPU-0, 4242'; echo 'GPU-1, 4343' ;;\n"
      "  *) exit 2 ;;\n"
      "esac\n");
  chmod(fake.c_str(), 0755);
  dir.write("busy", "");
  dir.write("hosts.yaml",
            "- hostname: localhost\n  gpu: [0, 1]\n  gpu_free: memory < 1GiB\n");
  dir.write("queue.yaml", "- echo ran on <<gpu>>\n");
  testing::ProcessSpec spec = testing::runner_spec({"queue", "--no-status"}, dir.path());
  spec.env["PATH"] = dir.file("bin") + ":/usr/bin:/bin";
  spec.env["BUSY"] = dir.file("busy");
  testing::Process run(spec);
  ASSERT_TRUE(run.wait_for_output("localhost gpu=0: its GPU is not free (4.9 GiB in use; "
                                  "gpu_free: memory < 1GiB); jobs wait for it",
                                  10s))
      << run.peek_err();
  // Each GPU's line is written as it is found: the second may come later.
  EXPECT_TRUE(run.wait_for_output("localhost gpu=1: its GPU is not free (8.8 GiB in use", 10s))
      << run.peek_err();
  EXPECT_EQ(run.peek_out().find("ran on"), std::string::npos) << "it waits";
  std::filesystem::remove(dir.file("busy"));
  testing::ProcessResult result = run.wait();
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("ran on 0"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("localhost gpu=0: its GPU is free again"), std::string::npos)
      << result.err;
}

// An nvidia-smi in `dir`/bin whose look at the GPUs' use never ends (it
// runs `hang`), as on a node whose driver is stuck.
void write_hanging_nvidia_smi(const testing::TempDir& dir, const std::string& hang) {
  std::string fake = dir.write("bin/nvidia-smi",
                               "#!/bin/sh\n"
                               "case \"$1\" in\n"
                               "  --query-gpu=*) exec " + hang + " ;;\n"
                               "  *) exit 2 ;;\n"
                               "esac\n");
  chmod(fake.c_str(), 0755);
}

// Runs `spec` (a queue of one job on a gated GPU of a host whose
// nvidia-smi hangs in `hang`, with a limit of one second): the job runs
// after the limit, and the hung look is gone.
void expect_hung_look_given_up(testing::ProcessSpec spec, const std::string& host,
                               const std::string& hang) {
  spec.env["RUNNER_GPU_CHECK_TIMEOUT"] = "1s";
  spec.timeout = 30s;
  auto started = std::chrono::steady_clock::now();
  testing::ProcessResult result = testing::run_process(spec);
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_FALSE(result.timed_out) << "the queue waited for nvidia-smi: " << result.err;
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("ran on 0"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find(host + ": cannot tell whether its GPUs are free for `gpu_free` "
                                   "(nvidia-smi did not answer within 1.0s); its jobs start "
                                   "without waiting"),
            std::string::npos)
      << result.err;
  EXPECT_GE(took, 1s);
  EXPECT_EQ(testing::live_processes_running(hang), 0) << "the hung look is killed";
}

TEST(GpuFreeRun, AnNvidiaSmiThatHangsIsGivenUpOnAtTheLimitAndTheJobRuns) {
  testing::TempDir dir;
  std::string hang = "sleep 40." + std::to_string(getpid());
  write_hanging_nvidia_smi(dir, hang);
  dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0]\n  gpu_free: memory < 1GiB\n");
  dir.write("queue.yaml", "- echo ran on <<gpu>>\n");
  testing::ProcessSpec spec = testing::runner_spec({"queue", "--no-status"}, dir.path());
  spec.env["PATH"] = dir.file("bin") + ":/usr/bin:/bin";
  expect_hung_look_given_up(spec, "localhost", hang);
}

TEST(GpuFreeRun, AnNvidiaSmiThatHangsOverSshIsGivenUpOnAtTheLimitAndTheJobRuns) {
  testing::TempDir dir;
  std::string hang = "sleep 41." + std::to_string(getpid());
  write_hanging_nvidia_smi(dir, hang);
  testing::LoopbackFleet fleet(dir);
  testing::SshdOptions options;
  options.session_environment = {"PATH=" + dir.file("bin") + ":/usr/bin:/bin"};
  if (!fleet.start(1, options)) {
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  dir.write("hosts.yaml",
            "- hostname: " + fleet.name(0) + "\n  gpu: [0]\n  gpu_free: memory < 1GiB\n");
  dir.write("queue.yaml", "- echo ran on <<gpu>>\n");
  expect_hung_look_given_up(fleet.runner({"queue", "--no-status"}), fleet.name(0), hang);
}

}  // namespace
}  // namespace runner
