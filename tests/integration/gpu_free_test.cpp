// `gpu_free:` with the real binary on a local host and a fake nvidia-smi
// whose answer the test changes: a job waits while another process holds
// its GPU and starts once the GPU is free.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

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

}  // namespace
}  // namespace runner
