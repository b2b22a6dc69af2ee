// `runner lock`: hold the queue lock while the user edits the queue, the way
// `crontab -e` does: the editor works on a copy, which replaces the queue
// only if it parses; otherwise the user is told where and offered another
// go, and the queue is never left broken.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "fatal.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/queue/queue_document.h"
#include "runner/queue/queue_edit.h"
#include "runner/queue/queue_file.h"
#include "runner/queue/queue_lock.h"
#include "runner/queue/real_queue_path.h"
#include "subcommand.h"

extern char** environ;

namespace runner {

namespace {

std::string choose_editor(const LockOptions& options) {
  if (!options.editor.empty()) return options.editor;
  for (const char* name : {"VISUAL", "EDITOR"})
    if (const char* value = std::getenv(name); value && *value) return value;
  return "vim";
}

// Runs `editor file` through sh, so an editor given with arguments
// ("code --wait") works. Returns its exit status, or -1.
int run_editor(const std::string& editor, const std::string& file) {
  std::string script = editor + " \"$1\"";
  const char* argv[] = {"sh", "-c", script.c_str(), "sh", file.c_str(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
    return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

QueueLock wait_for_lock(const std::string& queue_path) {
  auto warn = [](const std::string& m) { fmt::print(stderr, "runner: warning: {}\n", m); };
  bool told = false;
  while (true) {
    std::string holder;
    if (auto lock = value_or_fatal(QueueLock::try_acquire(queue_path, warn, &holder)))
      return std::move(*lock);
    if (!told) fmt::print(stderr, "runner: {} is locked by {}; waiting\n", queue_path, holder);
    told = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The problem with `text`, or empty if it is a valid queue.
std::string problem_in(const std::string& text, const std::string& queue_path) {
  Result<QueueDocument> doc = parse_queue_document(text, queue_path);
  return doc ? std::string() : doc.status().located_message();
}

bool ask_yes(const std::string& question) {
  fmt::print(stderr, "{} [Y/n] ", question);
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer.empty() || answer[0] == 'y' || answer[0] == 'Y';
}

}  // namespace

int lock_queue(const LockOptions& options) {
  const std::string& queue_path = options.queue_file;
  QueueLock lock = wait_for_lock(real_queue_path(queue_path));
  QueueEdit edit = value_or_fatal(QueueEdit::begin(queue_path));
  const std::string& original = edit.original();

  std::filesystem::path queue(queue_path);
  std::string copy = (queue.parent_path() / ("." + queue.filename().string() + ".edit-XXXXXX.yaml"))
                         .string();
  int fd = mkstemps(copy.data(), 5);
  if (fd < 0) throw ConfigError(queue_path, 0, 0, "cannot create a copy to edit beside it");
  close(fd);
  fatal_unless(write_file_atomically(copy, original));

  std::string editor = choose_editor(options);
  while (true) {
    int status = run_editor(editor, copy);
    if (status != 0) {
      fmt::print(stderr, "runner: editor '{}' failed (status {}); {} is unchanged, your edit is in {}\n",
                 editor, status, queue_path, copy);
      return 1;
    }
    std::string edited = value_or_fatal(read_file(copy));
    if (edited == original) {
      std::filesystem::remove(copy);
      fmt::print(stderr, "runner: no changes to {}\n", queue_path);
      return 0;
    }
    std::string problem = problem_in(edited, queue_path);
    if (problem.empty()) {
      if (!value_or_fatal(edit.save(edited))) {
        fmt::print(stderr,
                   "runner: {} was changed meanwhile by a program that does not take the lock; "
                   "it is left as that program wrote it, and your edit is kept in {}\n",
                   queue_path, copy);
        return 1;
      }
      std::filesystem::remove(copy);
      fmt::print(stderr, "runner: {} updated\n", queue_path);
      return 0;
    }
    fmt::print(stderr, "runner: error: {}\n", problem);
    if (!ask_yes("Edit again?")) {
      fmt::print(stderr, "runner: {} is unchanged; your edit is kept in {}\n", queue_path, copy);
      return 1;
    }
  }
}

Subcommand add_lock_command(CLI::App& app, const UserDefaults& defaults, IgnoredOptions& ignored) {
  auto options = std::make_shared<LockOptions>();
  take(defaults.queue_file, options->queue_file);
  auto* lock = app.add_subcommand("lock", "Lock the queue and edit it");
  lock->alias("l");
  lock->add_option("-Q,--queue-file", options->queue_file, "The queue (default: queue.yaml)")
      ->envname(k_queue_file_env);
  lock->add_option("--editor", options->editor, "Editor (default: $VISUAL, $EDITOR, vim)");
  ignored.add_option(*lock, "-H,--hosts-file");
  ignored.add_flag(*lock, "-d,--daemon");
  ignored.add_flag(*lock, "-i,--ignore-errors");
  ignored.add_flag(*lock, "-e,--error-aborts");
  ignored.add_option(*lock, "-p,--print-period");
  set_example(*lock, "runner lock --queue-file queue.yaml --editor nano");
  return {lock, [options] { return lock_queue(*options); }};
}

}  // namespace runner
