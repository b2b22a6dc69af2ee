#include "support/docker_engine.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/daemon.h"
#include "support/wait.h"

namespace runner::testing {

namespace {

using namespace std::chrono_literals;

constexpr const char* k_dockerd = "/usr/sbin/dockerd";
constexpr const char* k_client =
    "/usr/bin/docker";  // of the daemon's version, not /usr/local/bin's
constexpr const char* k_rootfs_tarball = "debian-bookworm-minbase.tar";

// Makes the cached root file system once, under a lock, so that test
// processes running side by side debootstrap it once between them.
// Returns its path, or an empty string with `why_not` set.
std::string cached_rootfs(std::string& why_not) {
  const std::string cache = DockerEngine::k_cache_dir;
  const std::string tarball = cache + "/" + k_rootfs_tarball;
  if (std::filesystem::exists(tarball)) return tarball;
  if (::access("/usr/sbin/debootstrap", X_OK) != 0) {
    why_not = "no /usr/sbin/debootstrap to make the test image (install debootstrap)";
    return {};
  }
  std::filesystem::create_directories(cache);
  const std::string script =
      "set -e; exec 9>\"$1/.lock\"; flock 9; [ -f \"$1/$2\" ] && exit 0; "
      "root=$(mktemp -d \"$1/rootfs.XXXXXX\"); trap 'rm -rf \"$root\" \"$1/$2.part\"' EXIT; "
      "debootstrap --variant=minbase bookworm \"$root\" >\"$1/debootstrap.log\" 2>&1 || "
      "{ tail -20 \"$1/debootstrap.log\" >&2; exit 1; }; "
      "tar -c -C \"$root\" . >\"$1/$2.part\"; mv \"$1/$2.part\" \"$1/$2\"";
  ProcessSpec spec{{"/bin/sh", "-c", script, "sh", cache, k_rootfs_tarball}};
  spec.timeout = 15min;
  ProcessResult made = run_process(spec);
  if (made.status != 0)
    throw std::runtime_error("debootstrap of the test image failed:\n" + made.err);
  return tarball;
}

}  // namespace

DockerEngine* DockerEngine::shared(std::string& why_not) {
  static std::unique_ptr<DockerEngine> engine;
  static std::string failed;
  if (!engine && failed.empty()) {
    std::unique_ptr<DockerEngine> started(new DockerEngine());
    if (started->start(failed)) engine = std::move(started);
  }
  why_not = failed;
  return engine.get();
}

bool DockerEngine::start(std::string& why_not) {
  if (::geteuid() != 0) {
    why_not = "a test Docker engine needs root";
    return false;
  }
  for (const char* program : {k_dockerd, k_client}) {
    if (::access(program, X_OK) != 0) {
      why_not = fmt::format("no {} (install docker.io)", program);
      return false;
    }
  }
  std::string rootfs = cached_rootfs(why_not);
  if (rootfs.empty()) return false;

  std::string name = fmt::format("runner-docker-{}", ::getpid());
  ProcessResult added = run_process({{"/usr/bin/ip", "netns", "add", name}});
  if (added.status != 0) {
    why_not = "`ip netns add` failed: " + added.err;
    return false;
  }
  m_namespace = name;
  std::filesystem::create_directories(m_dir.file("bin"));
  std::filesystem::create_symlink(k_client, m_dir.file("bin/docker"));
  // `nsenter --net`, not `ip netns exec`, which mounts a /sys of its own.
  m_daemon = launch_daemon(
      {"/usr/bin/nsenter", "--net=/run/netns/" + name, k_dockerd, "--data-root", m_dir.file("data"),
       "--exec-root", m_dir.file("exec"), "-H", "unix://" + m_dir.file("docker.sock"), "--pidfile",
       m_dir.file("docker.pid"), "--bridge=none", "--iptables=false"},
      m_dir.file("dockerd.log"), {});
  if (!wait_until([&] { return docker({"info"}).status == 0; }, 60s))
    throw std::runtime_error("dockerd did not start:\n" + log());
  ProcessSpec import{{k_client, "import", rootfs, k_image}, "", env()};
  import.timeout = 5min;
  ProcessResult imported = run_process(import);
  if (imported.status != 0)
    throw std::runtime_error("docker import of the test image failed:\n" + imported.err);
  return true;
}

DockerEngine::~DockerEngine() {
  if (m_daemon > 0) {
    std::istringstream ids(docker({"ps", "-aq"}).out);
    std::vector<std::string> remove{"rm", "-f"};
    for (std::string id; ids >> id;) remove.push_back(id);
    if (remove.size() > 2) (void)docker(remove);
    stop_daemon(m_daemon, 20s);
  }
  if (!m_namespace.empty()) (void)run_process({{"/usr/bin/ip", "netns", "del", m_namespace}});
}

std::map<std::string, std::string> DockerEngine::env() const {
  const char* path = std::getenv("PATH");
  return {{"DOCKER_HOST", "unix://" + m_dir.file("docker.sock")},
          {"PATH", m_dir.file("bin") + ":" + (path ? path : "/usr/bin:/bin")}};
}

ProcessResult DockerEngine::docker(std::vector<std::string> args) const {
  args.insert(args.begin(), k_client);
  return run_process({std::move(args), "", env()});
}

void DockerEngine::start_container(const std::string& name) const {
  ProcessResult started =
      docker({"run", "-d", "--network", "none", "--name", name, k_image, "sleep", "infinity"});
  if (started.status != 0)
    throw std::runtime_error("docker run " + name + " failed:\n" + started.err);
}

std::vector<std::string> DockerEngine::processes(const std::string& name) const {
  // docker top insists on the pid column.
  ProcessResult top = docker({"top", name, "-o", "pid,args"});
  std::vector<std::string> lines;
  std::istringstream text(top.out);
  std::string line;
  std::getline(text, line);  // the heading
  while (std::getline(text, line)) {
    std::size_t args = line.find_first_not_of(' ', line.find(' '));
    if (args == std::string::npos) continue;
    if (line.substr(args) != "sleep infinity") lines.push_back(line.substr(args));
  }
  return lines;
}

std::string DockerEngine::write_docker_without_gpus(const TempDir& dir) {
  std::filesystem::permissions(
      dir.write(
          "bin/docker",
          "#!/bin/sh\n"
          "# No GPU here: drop --gpus VALUE.\n"
          "n=$#; while [ $n -gt 0 ]; do a=$1; shift; n=$((n - 1));\n"
          "  if [ \"$a\" = --gpus ]; then shift; n=$((n - 1)); else set -- \"$@\" \"$a\"; fi\n"
          "done\nexec /usr/bin/docker \"$@\"\n"),
      std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
  return dir.file("bin");
}

std::string DockerEngine::log() const {
  std::ifstream in(m_dir.file("dockerd.log"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace runner::testing
