// A throwaway sshd for tests (see support/sshd.h). Single-threaded: start()
// blocks until the server accepts connections; stop() blocks until it and
// everything it forked are gone.
#include "support/sshd.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/loopback_port.h"

namespace runner::testing {

namespace {

constexpr const char* k_sshd = "/usr/sbin/sshd";
constexpr const char* k_ssh_keygen = "ssh-keygen";
constexpr const char* k_marker = "RUNNER_TEST_SSHD";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

// A null-terminated argv for exec*() that points into `args`.
std::vector<char*> argv_of(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// Runs argv[0] (looked up in PATH) with output to `log`; returns its exit status.
int run(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv = argv_of(args);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (null >= 0) dup2(null, 0);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void generate_key(const std::string& path, const std::string& log) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  std::filesystem::remove(path + ".pub", ignored);
  if (run({k_ssh_keygen, "-q", "-t", "ed25519", "-N", "", "-C", "runner-test", "-f", path}, log) !=
      0) {
    throw std::runtime_error("ssh-keygen failed for " + path + ": " + read_file(log));
  }
}

// Starts sshd in the foreground of its own process group, its log to
// `log_path`, through `launcher` when given.
pid_t spawn_sshd(const std::vector<std::string>& launcher, const std::string& config_path,
                 const std::string& log_path) {
  std::vector<std::string> args = launcher;
  args.insert(args.end(), {k_sshd, "-D", "-e", "-f", config_path});
  std::vector<char*> argv = argv_of(args);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);
    int log = open(log_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
    }
    if (log >= 0) dup2(log, 2);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

std::string current_user() {
  if (passwd* entry = getpwuid(geteuid())) return entry->pw_name;
  const char* user = std::getenv("USER");
  return user ? user : "root";
}

// Parent pid of every process, from /proc/<pid>/stat.
std::map<pid_t, pid_t> parent_pids() {
  std::map<pid_t, pid_t> parents;
  DIR* proc = opendir("/proc");
  if (!proc) return parents;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string stat = read_file(std::string("/proc/") + entry->d_name + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 1));
    std::string state;
    long ppid = 0;
    if (fields >> state >> ppid) parents[static_cast<pid_t>(pid)] = static_cast<pid_t>(ppid);
  }
  closedir(proc);
  return parents;
}

}  // namespace

// Fields 3 (state) and 5 (pgid) of /proc/<pid>/stat.
bool process_state(pid_t pid, char& state, pid_t& pgid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(stat.substr(paren + 1));
  long ppid = 0;
  long group = 0;
  if (!(fields >> state >> ppid >> group)) return false;
  pgid = static_cast<pid_t>(group);
  return true;
}

bool process_running(pid_t pid) {
  char state = 0;
  pid_t pgid = 0;
  return process_state(pid, state, pgid) && state != 'Z' && state != 'X';
}

std::vector<pid_t> running_group_members(pid_t pgid) {
  std::vector<pid_t> members;
  for (const auto& [pid, ppid] : parent_pids()) {
    char state = 0;
    pid_t group = 0;
    if (process_state(pid, state, group) && group == pgid && state != 'Z' && state != 'X') {
      members.push_back(pid);
    }
  }
  return members;
}

bool sshd_required() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

std::unique_ptr<Sshd> Sshd::start(const std::string& dir, const SshdOptions& options) {
  if (access(k_sshd, X_OK) != 0) return nullptr;

  std::unique_ptr<Sshd> sshd(new Sshd());
  std::filesystem::create_directories(dir);
  sshd->m_dir = std::filesystem::absolute(dir).string();
  sshd->m_user = current_user();
  sshd->m_log = sshd->m_dir + "/sshd.log";
  sshd->m_address = options.listen_address;
  sshd->m_launcher = options.launcher;
  const std::string& base = sshd->m_dir;

  // sshd's privilege separation needs this directory when it runs as root.
  if (geteuid() == 0) mkdir("/run/sshd", 0755);

  std::string keygen_log = base + "/ssh-keygen.log";
  sshd->m_host_key = base + "/ssh_host_ed25519_key";
  generate_key(sshd->m_host_key, keygen_log);
  if (options.client_key.empty()) {
    sshd->m_client_key = base + "/client_ed25519";
    generate_key(sshd->m_client_key, keygen_log);
  } else {
    sshd->m_client_key = std::filesystem::absolute(options.client_key).string();
  }
  std::string client_public = read_file(sshd->m_client_key + ".pub");
  if (client_public.empty()) {
    throw std::runtime_error("no public key at " + sshd->m_client_key + ".pub");
  }
  sshd->m_authorized_keys = base + "/authorized_keys";
  write_file(sshd->m_authorized_keys, client_public);
  chmod(sshd->m_host_key.c_str(), 0600);

  for (int attempt = 0; attempt < 5; ++attempt) {
    int port = options.port != 0 ? options.port : unused_port();
    std::ostringstream config;
    config << "ListenAddress " << options.listen_address << "\n"
           << "Port " << port << "\n"
           << "HostKey " << sshd->m_host_key << "\n"
           << "AuthorizedKeysFile " << sshd->m_authorized_keys << "\n"
           << "PasswordAuthentication no\n"
           << "KbdInteractiveAuthentication no\n"
           << "UsePAM no\n"
           << "StrictModes no\n"
           << "PermitRootLogin prohibit-password\n"
           << "PidFile " << base << "/sshd.pid\n"
           << "MaxSessions " << options.max_sessions << "\n"
           << "PrintMotd no\n"
           // Marks every process of every session, even one that outlives
           // its connection, so that stop() finds it.
           << "SetEnv " << k_marker << "=" << base;
    // bash, as a login shell run by sshd, sources ~/.bashrc unless it is
    // nested (SHLVL > 0): keep the machine's rc files out.
    if (!options.source_bashrc) config << " SHLVL=1";
    for (const std::string& variable : options.session_environment) config << " " << variable;
    config << "\n"
           << "LogLevel " << options.log_level << "\n";
    if (!options.max_startups.empty()) config << "MaxStartups " << options.max_startups << "\n";
    if (!options.extra_config.empty()) config << options.extra_config << "\n";
    std::string config_path = base + "/sshd_config";
    write_file(config_path, config.str());
    write_file(sshd->m_log, "");

    pid_t pid = spawn_sshd(sshd->m_launcher, config_path, sshd->m_log);
    sshd->m_pid = pid;
    sshd->m_config_path = config_path;

    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool exited = false;
    while (std::chrono::steady_clock::now() < give_up) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      if (accepts_connections(port, sshd->m_address)) {
        sshd->m_port = port;
        return sshd;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    sshd->m_pid = -1;
    std::string log = sshd->log();
    if (log.find("Address already in use") == std::string::npos) {
      throw std::runtime_error("sshd did not start:\n" + log);
    }
  }
  throw std::runtime_error("sshd found no free port:\n" + sshd->log());
}

Sshd::~Sshd() { stop(); }

void Sshd::cut_network() {
  if (m_pid <= 0) return;
  kill(m_pid, SIGSTOP);
  for (pid_t pid : descendants()) {
    std::string comm = read_file("/proc/" + std::to_string(pid) + "/comm");
    if (comm.rfind("sshd", 0) == 0) kill(pid, SIGKILL);
  }
  kill(m_pid, SIGKILL);
  waitpid(m_pid, nullptr, 0);
  m_pid = -1;
}

void Sshd::restart() {
  stop();
  m_pid = spawn_sshd(m_launcher, m_config_path, m_log);
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < give_up) {
    if (accepts_connections(m_port, m_address)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("sshd did not come back on port " + std::to_string(m_port) + ":\n" +
                           log());
}

std::string Sshd::known_hosts_line() const {
  std::string key = read_file(m_host_key + ".pub");
  std::istringstream fields(key);
  std::string type, blob;
  fields >> type >> blob;
  std::string host = m_port == 22 ? m_address : "[" + m_address + "]:" + std::to_string(m_port);
  return host + " " + type + " " + blob;
}

std::string Sshd::log() const { return read_file(m_log); }

std::vector<pid_t> Sshd::descendants() const {
  std::vector<pid_t> found;
  if (m_pid <= 0) return found;
  std::map<pid_t, pid_t> parents = parent_pids();
  std::set<pid_t> members = {m_pid};
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& [pid, ppid] : parents) {
      if (members.count(ppid) && !members.count(pid)) {
        members.insert(pid);
        found.push_back(pid);
        grew = true;
      }
    }
  }
  // Session processes whose connection already ended have left the tree.
  std::string marker = std::string(k_marker) + "=" + m_dir;
  marker.push_back('\0');
  for (const auto& [pid, ppid] : parents) {
    if (members.count(pid)) continue;
    std::string environment = read_file("/proc/" + std::to_string(pid) + "/environ");
    environment.push_back('\0');
    if (environment.rfind(marker, 0) == 0 || environment.find('\0' + marker) != std::string::npos) {
      found.push_back(pid);
    }
  }
  return found;
}

std::set<pid_t> Sshd::freeze() {
  // Stop parents first so that no new child escapes, then look again for
  // children forked in between. Remember every process seen: one whose
  // parent exits meanwhile leaves the tree but must still be found.
  std::set<pid_t> stopped;
  for (int round = 0; round < 20; ++round) {
    bool any = false;
    for (pid_t pid : descendants()) {
      if (stopped.insert(pid).second) {
        kill(pid, SIGSTOP);
        any = true;
      }
    }
    if (!any) break;
  }
  return stopped;
}

void Sshd::pause_sessions() {
  std::set<pid_t> stopped = freeze();
  m_paused.insert(stopped.begin(), stopped.end());
}

void Sshd::resume_sessions() {
  for (pid_t pid : descendants()) m_paused.insert(pid);
  for (pid_t pid : m_paused) kill(pid, SIGCONT);
  m_paused.clear();
}

void Sshd::kill_sessions() {
  std::set<pid_t> doomed = freeze();
  doomed.insert(m_paused.begin(), m_paused.end());
  m_paused.clear();
  for (pid_t pid : doomed) kill(pid, SIGKILL);
  // The listener reaps its children; wait until it has.
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!descendants().empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Sshd::stop() {
  if (m_pid <= 0) return;
  // Freeze the listener and the whole tree before killing, so no process is
  // reparented away from the tree before it is found.
  kill(m_pid, SIGSTOP);
  std::set<pid_t> doomed = freeze();
  doomed.insert(m_paused.begin(), m_paused.end());
  m_paused.clear();
  for (pid_t pid : doomed) kill(pid, SIGKILL);
  kill(m_pid, SIGTERM);
  kill(m_pid, SIGCONT);
  int status = 0;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (waitpid(m_pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      kill(m_pid, SIGKILL);
      waitpid(m_pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  m_pid = -1;
}

}  // namespace runner::testing
