// One piece of work on every host at once: begun on each host when it is
// connected, over when every host is done, and a host still at work when
// the deadline passes failed with what it was doing. Driven on local hosts.
#include "runner/cli/host_round.h"

#include <gtest/gtest.h>

#include <map>

#include "support/value_of.h"

namespace runner {
namespace {

using testing::value_of;

// Two local hosts: no SSH.
Fleet local_hosts() { return value_of(parse_hosts("- localhost\n- 127.0.0.1\n", "hosts.yaml")); }

// Runs `command` on every host as task host+1, and is done with a host
// when its task ends; or, when `command` is empty, never begins anything.
class CommandRound : public HostRound {
 public:
  explicit CommandRound(std::string command)
      : HostRound("the command"), m_command(std::move(command)) {}

  std::map<int, int> began;  // host → times
  std::map<int, std::string> output;
  std::map<int, std::string> failures;
  int exits = 0;

  void task_output(TaskId task, OutputStream, std::string_view bytes) override {
    output[static_cast<int>(task) - 1] += bytes;
  }
  void task_exited(TaskId task, const JobExit&) override {
    ++exits;
    EXPECT_TRUE(done(static_cast<int>(task) - 1));
  }

 protected:
  void begin(int host, Executor& executor) override {
    ++began[host];
    if (!m_command.empty())
      executor.start_task(static_cast<TaskId>(host + 1), m_command + " " + std::to_string(host));
  }
  void failed(int host, const std::string& why) override { failures[host] = why; }

 private:
  std::string m_command;
};

TEST(HostRound, EveryHostBeginsOnceAndTheRoundEndsWhenEveryHostIsDone) {
  CommandRound round("echo host");
  round.run(local_hosts(), nullptr, Clock::now() + std::chrono::seconds(30));
  EXPECT_EQ(round.began, (std::map<int, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(round.output, (std::map<int, std::string>{{0, "host 0\n"}, {1, "host 1\n"}}));
  EXPECT_EQ(round.exits, 2);
  EXPECT_TRUE(round.failures.empty());
}

TEST(HostRound, AHostStillAtWorkAtTheDeadlineFailsSayingItWasConnected) {
  CommandRound round("");
  round.run(local_hosts(), nullptr, Clock::now() + std::chrono::milliseconds(500));
  EXPECT_EQ(round.began, (std::map<int, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(round.failures,
            (std::map<int, std::string>{{0, "connected, but the command did not finish in time"},
                                        {1, "connected, but the command did not finish in time"}}));
}

}  // namespace
}  // namespace runner
