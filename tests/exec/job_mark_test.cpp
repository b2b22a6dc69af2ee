// A job's mark (process_group.h) in the environment of its processes, as
// each kind of channel script starts them: the group's leader carries it,
// and so does what the job starts.
#include <gtest/gtest.h>

#include <string>

#include "runner/exec/launcher.h"
#include "support/process.h"

namespace runner {
namespace {

const std::string k_token = "runner-end-0123456789abcdef";
const std::string k_mark = "0123abcd-7";

// The leader's own environment, then a child's.
const std::string k_show_marks =
    "tr '\\000' '\\n' </proc/$$/environ | grep RUNNER_JOB_MARK; printenv RUNNER_JOB_MARK";

// What sh, given `script` on stdin as a login shell gives it, prints.
std::string output_of(const std::string& script) {
  testing::ProcessSpec spec;
  spec.args = {"/bin/sh", "-c", std::string(k_login_command)};
  spec.input = script;
  return testing::run_process(spec).out;
}

std::string expected_marks() { return "RUNNER_JOB_MARK=" + k_mark + "\n" + k_mark + "\n"; }

TEST(JobMark, ALaunchedJobsLeaderAndChildrenCarryIt) {
  std::string out =
      output_of(launcher_script(k_token) + launcher_job_line(k_show_marks, k_token, 0, k_mark));
  EXPECT_NE(out.find("\n" + expected_marks()), std::string::npos) << out;
}

TEST(JobMark, AJobOnAChannelOfItsOwnCarriesIt) {
  std::string out = output_of(job_channel_script(k_show_marks, k_token, k_mark));
  EXPECT_NE(out.find("\n" + expected_marks()), std::string::npos) << out;
}

TEST(JobMark, AJobThatReadsItsInputCarriesIt) {
  std::string out = output_of(input_channel_script(k_show_marks, k_token, k_mark));
  EXPECT_NE(out.find("\n" + expected_marks()), std::string::npos) << out;
}

}  // namespace
}  // namespace runner
