#include "support/remote_user.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "support/process.h"

namespace runner::testing {

namespace {

ProcessResult run(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.args = std::move(args);
  spec.timeout = std::chrono::seconds(30);
  return run_process(spec);
}

std::string fresh_name() {
  static std::atomic<int> counter{0};
  std::random_device random;
  return fmt::format("rt{:x}{}", random() & 0xffffff, counter++);
}

}  // namespace

bool shell_installed(const std::string& shell) { return ::access(shell.c_str(), X_OK) == 0; }

std::unique_ptr<RemoteUser> RemoteUser::create(const std::string& shell) {
  if (::geteuid() != 0) return nullptr;
  if (!shell_installed(shell)) return nullptr;
  std::unique_ptr<RemoteUser> user(new RemoteUser);
  user->m_name = fresh_name();
  user->m_home = "/home/" + user->m_name;
  user->m_shell = shell;
  ProcessResult added = run({"useradd", "--create-home", "--home-dir", user->m_home, "--shell",
                             shell, "--no-user-group", "--gid", "users",
                             // "*": no password, but not locked, which sshd without
                             // PAM would refuse even for a key
                             "--password", "*", user->m_name});
  if (added.status != 0)
    throw std::runtime_error("useradd " + user->m_name + " failed: " + added.err);
  return user;
}

RemoteUser::~RemoteUser() {
  // Whatever the user still runs goes first, or userdel refuses.
  run({"pkill", "-KILL", "-u", m_name});
  run({"userdel", "--remove", "--force", m_name});
}

void RemoteUser::allow_login(const Sshd& sshd) const {
  std::filesystem::path file = sshd.authorized_keys_file();
  std::filesystem::permissions(file, std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  std::filesystem::path temp = std::filesystem::temp_directory_path();
  for (std::filesystem::path folder = file.parent_path();
       folder.has_relative_path() && folder != temp; folder = folder.parent_path()) {
    std::filesystem::permissions(folder, std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add);
  }
}

void RemoteUser::write_file(const std::string& relative, const std::string& text) const {
  std::string path = m_home + "/" + relative;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  run({"chown", m_name + ":users", path});
}

}  // namespace runner::testing
