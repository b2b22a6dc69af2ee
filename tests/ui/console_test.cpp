// Console: what a user sees on the terminal or in a pipe — prefixes,
// colours, print periods, partial lines and runner messages.
#include "runner/ui/console.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "support/pipe.h"
#include "support/pty.h"

namespace runner {
namespace {

using testing::Pipe;
using testing::Pty;

// Sets (or with nullptr unsets) an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~EnvVar() {
    if (m_old) {
      setenv(m_name.c_str(), m_old->c_str(), 1);
    } else {
      unsetenv(m_name.c_str());
    }
  }

 private:
  std::string m_name;
  std::optional<std::string> m_old;
};

TEST(Console, PrefixesEachLineWithItsSlotWithoutColourInAPipe) {
  Pipe out;
  Pipe err;
  {
    Console console(out.write_fd(), err.write_fd());
    EXPECT_FALSE(console.colors_output());
    console.job_output(1, 0, "node01 gpu=0", OutputStream::out, "hello\nworld\n");
    console.job_output(2, 1, "node02", OutputStream::err, "oops\n");
  }
  EXPECT_EQ(out.drain(), "[node01 gpu=0] hello\n[node01 gpu=0] world\n[node02] oops\n");
  EXPECT_EQ(err.drain(), "");
}

TEST(Console, PipeOutputIsBufferedUntilFlush) {
  Pipe out;
  Console console(out.write_fd(), out.write_fd(), ColorMode::never);
  console.job_output(1, 0, "a", OutputStream::out, "one\ntwo\n");
  EXPECT_EQ(out.drain(), "");
  console.flush();
  EXPECT_EQ(out.drain(), "[a] one\n[a] two\n");
}

TEST(Console, MessagesComeAfterTheJobLinesBeforeThem) {
  Pipe both;
  Console console(both.write_fd(), both.write_fd(), ColorMode::never);
  console.job_output(1, 0, "a", OutputStream::out, "line\n");
  console.info("starting job 2");
  EXPECT_EQ(both.drain(), "[a] line\nrunner: starting job 2\n");
}

TEST(Console, ForcedColourPaintsOnlyTheLabel) {
  Pipe out;
  Pipe err;
  Console console(out.write_fd(), err.write_fd(), ColorMode::always);
  EXPECT_TRUE(console.colors_output());
  console.job_output(7, 3, "node01 gpu=3", OutputStream::out, "text\n");
  console.flush();
  std::string expected = "\x1b[" + slot_color(3) + "m[node01 gpu=3]\x1b[0m text\n";
  EXPECT_EQ(out.drain(), expected);
}

TEST(Console, SlotColoursDifferAndGoBoldPastThePalette) {
  for (int a = 0; a < 16; ++a) {
    for (int b = a + 1; b < 16; ++b) EXPECT_NE(slot_color(a), slot_color(b)) << a << " " << b;
  }
  EXPECT_EQ(slot_color(8), "1;" + slot_color(0));
  EXPECT_EQ(slot_color(16), slot_color(0));
}

TEST(Console, ColoursATerminal) {
  EnvVar no_color("NO_COLOR", nullptr);
  EnvVar term("TERM", "xterm-256color");
  Pty pty;
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminal available";
  Console console(pty.terminal_fd(), pty.terminal_fd());
  EXPECT_TRUE(console.colors_output());
  console.job_output(1, 0, "n", OutputStream::out, "hi\n");
  std::string expected = "\x1b[" + slot_color(0) + "m[n]\x1b[0m hi\n";
  // On a terminal each line is written at once, without flush().
  EXPECT_EQ(pty.read(expected.size()), expected);
}

TEST(Console, NoColourWithNoColorOrDumbTerminal) {
  Pty pty;
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminal available";
  {
    EnvVar no_color("NO_COLOR", "1");
    EXPECT_FALSE(color_enabled(ColorMode::automatic, pty.terminal_fd()));
    EXPECT_TRUE(color_enabled(ColorMode::always, pty.terminal_fd()));
  }
  {
    EnvVar no_color("NO_COLOR", "");
    EnvVar term("TERM", "dumb");
    EXPECT_FALSE(color_enabled(ColorMode::automatic, pty.terminal_fd()));
  }
  {
    EnvVar no_color("NO_COLOR", "");
    EnvVar term("TERM", "xterm");
    EXPECT_TRUE(color_enabled(ColorMode::automatic, pty.terminal_fd()));
    EXPECT_FALSE(color_enabled(ColorMode::never, pty.terminal_fd()));
  }
  EnvVar no_color("NO_COLOR", "yes");
  Console console(pty.terminal_fd(), pty.terminal_fd());
  console.job_output(1, 0, "n", OutputStream::out, "plain\n");
  EXPECT_EQ(pty.read(10), "[n] plain\n");
}

TEST(Console, OnATerminalALongLineIsCutIntoPiecesThatEachCarryThePrefix) {
  Pty pty(20, 10);
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminal here";
  Console console(pty.terminal_fd(), pty.terminal_fd(), ColorMode::never);
  console.job_output(1, 0, "node", OutputStream::out, "0123456789abcdefghijKLMNOPQRST\nshort\n");
  // "[node] " takes 7 of the 20 columns.
  EXPECT_EQ(pty.read_all(),
            "[node] 0123456789abc\n[node] defghijKLMNOP\n[node] QRST\n[node] short\n");
}

TEST(Console, InAPipeALongLineStaysWhole) {
  Pipe out;
  Console console(out.write_fd(), out.write_fd(), ColorMode::never);
  std::string line(300, 'x');
  console.job_output(1, 0, "node", OutputStream::out, line + "\n");
  console.flush();
  EXPECT_EQ(out.drain(), "[node] " + line + "\n");
}

std::string run_with_period(std::size_t period) {
  Pipe out;
  {
    Console console(out.write_fd(), out.write_fd(), ColorMode::never, period);
    console.job_output(1, 0, "a", OutputStream::out, "a1\na2\na3\n");
    console.job_output(2, 1, "b", OutputStream::out, "b1\n");
    console.job_output(1, 0, "a", OutputStream::err, "a4\na5\n");
    console.job_output(2, 1, "b", OutputStream::out, "b2\nb3\nb4\n");
    console.job_output(1, 0, "a", OutputStream::out, "a6\na7");
    console.job_finished(1);
    console.job_finished(2);
  }
  return out.drain();
}

// As Pegasus: lines N, 2N, 3N, ... of each stream of each job.
TEST(Console, PrintPeriodPrintsEveryNthLineOfEachStreamOfAJob) {
  EXPECT_EQ(run_with_period(0), "");
  EXPECT_EQ(run_with_period(1),
            "[a] a1\n[a] a2\n[a] a3\n[b] b1\n[a] a4\n[a] a5\n[b] b2\n[b] b3\n[b] b4\n"
            "[a] a6\n[a] a7\n");
  EXPECT_EQ(run_with_period(2), "[a] a2\n[a] a5\n[b] b2\n[b] b4\n[a] a6\n");
  EXPECT_EQ(run_with_period(3), "[a] a3\n[b] b3\n");
}

TEST(Console, AJobsNotesShowWhateverThePrintPeriod) {
  for (std::size_t period : {0, 1, 2}) {
    Pipe out;
    {
      Console console(out.write_fd(), out.write_fd(), ColorMode::never, period);
      console.job_note(1, 0, "a", "=== #1 run 'x' ===");
      console.job_output(1, 0, "a", OutputStream::out, "x1\nx2");
      console.job_finished(1);
      console.job_note(1, 0, "a", "=== #1 done (exit 0) after 1ms ===");
    }
    std::string lines = period == 0 ? "" : period == 1 ? "[a] x1\n[a] x2\n" : "[a] x2\n";
    EXPECT_EQ(out.drain(),
              "[a] === #1 run 'x' ===\n" + lines + "[a] === #1 done (exit 0) after 1ms ===\n")
        << period;
  }
}

TEST(Console, PartialLinesWaitForTheirJobAndFlushAtItsEnd) {
  Pipe out;
  Console console(out.write_fd(), out.write_fd(), ColorMode::never);
  console.job_output(1, 0, "a", OutputStream::out, "abc");
  console.job_output(2, 1, "b", OutputStream::out, "xyz\n");
  console.job_output(1, 0, "a", OutputStream::out, "def\nlast without newline");
  console.job_output(1, 0, "a", OutputStream::err, "err tail");
  console.flush();
  EXPECT_EQ(out.drain(), "[b] xyz\n[a] abcdef\n");
  console.job_finished(1);
  console.flush();
  EXPECT_EQ(out.drain(), "[a] last without newline\n[a] err tail\n");
}

TEST(Console, ProgressBarsPrintAsLines) {
  Pipe out;
  Console console(out.write_fd(), out.write_fd(), ColorMode::never);
  console.job_output(4, 0, "g", OutputStream::err, "\r 50%|##  |\r100%|####|\n");
  console.flush();
  EXPECT_EQ(out.drain(), "[g]  50%|##  |\n[g] 100%|####|\n");
}

TEST(Console, RunnerMessages) {
  Pipe out;
  Pipe err;
  Console console(out.write_fd(), err.write_fd(), ColorMode::never);
  console.info("3 hosts ready");
  console.warn("node02: connection lost");
  console.error("queue.yaml:3:5: bad entry");
  console.write_block("summary line\n");
  EXPECT_EQ(err.drain(),
            "runner: 3 hosts ready\nrunner: warning: node02: connection lost\n"
            "runner: error: queue.yaml:3:5: bad entry\nsummary line\n");
  EXPECT_EQ(out.drain(), "");
}

TEST(Console, ColouredMessageKinds) {
  Pipe out;
  Pipe err;
  Console console(out.write_fd(), err.write_fd(), ColorMode::always);
  console.warn("w");
  console.error("e");
  console.info("i");
  EXPECT_EQ(err.drain(),
            "runner: \x1b[1;33mwarning:\x1b[0m w\nrunner: \x1b[1;31merror:\x1b[0m e\n"
            "runner: i\n");
}

TEST(Console, ManyMegabytesPassThroughWhole) {
  Pipe out;
  // A slow, non-blocking destination forces short writes and EAGAIN.
  ::fcntl(out.write_fd(), F_SETFL, O_NONBLOCK);
  std::string received;
  std::thread reader([&] {
    char buffer[65536];
    for (;;) {
      pollfd pfd{out.read_fd(), POLLIN, 0};
      ::poll(&pfd, 1, 5000);
      ssize_t n = ::read(out.read_fd(), buffer, sizeof buffer);
      if (n == 0) break;
      if (n > 0) received.append(buffer, static_cast<std::size_t>(n));
    }
  });
  std::string chunk;
  for (int i = 0; i < 1000; ++i) chunk += "line " + std::to_string(i) + " of output\n";
  constexpr int k_chunks = 200;
  {
    Console console(out.write_fd(), out.write_fd(), ColorMode::never);
    for (int i = 0; i < k_chunks; ++i) {
      console.job_output(1 + i % 3, i % 3, "j", OutputStream::out, chunk);
    }
  }
  out.close_write();
  reader.join();
  std::size_t lines = 0;
  std::size_t pos = 0;
  while ((pos = received.find('\n', pos)) != std::string::npos) {
    ++lines;
    ++pos;
  }
  EXPECT_EQ(lines, 1000u * k_chunks);
  EXPECT_EQ(received.size(), (chunk.size() + 4 * 1000) * k_chunks);
  EXPECT_EQ(received.substr(0, 23), "[j] line 0 of output\n[j");
}

}  // namespace
}  // namespace runner
