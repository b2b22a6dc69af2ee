// A real Docker engine for tests of jobs that run `docker exec`: Debian's
// dockerd in a network namespace of its own (no bridge, no iptables), its
// data, socket and pid file in a temporary directory, with one image,
// k_image, a minimal Debian imported offline from a root file system that
// debootstrap made once (cached in k_cache_dir between runs: no registry is
// needed). One engine serves a whole test process; it removes its
// containers and is stopped by pid, its namespace deleted, when the process
// exits. Clients reach it with env(): DOCKER_HOST and a PATH whose `docker`
// is Debian's client, of the daemon's version.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/small_tmpfs.h"  // setup_required()
#include "support/temp_dir.h"

namespace runner::testing {

class DockerEngine {
 public:
  // The engine of this test process, started on first use. nullptr with
  // `why_not` set when this machine cannot have one (not root, docker.io or
  // debootstrap not installed); throws std::runtime_error with dockerd's
  // log when it is there but does not come up.
  static DockerEngine* shared(std::string& why_not);

  ~DockerEngine();
  DockerEngine(const DockerEngine&) = delete;
  DockerEngine& operator=(const DockerEngine&) = delete;

  // DOCKER_HOST, and PATH with Debian's `docker` first.
  std::map<std::string, std::string> env() const;
  // `docker ARGS` against this engine.
  ProcessResult docker(std::vector<std::string> args) const;
  // Starts a container of k_image named `name` that sleeps until removed;
  // throws std::runtime_error when docker refuses.
  void start_container(const std::string& name) const;
  // The command lines of the processes in container `name` (`docker top`),
  // but its `sleep infinity`.
  std::vector<std::string> processes(const std::string& name) const;
  // Writes `dir`/bin/docker, a `docker` that drops `--gpus VALUE` (this
  // machine has no NVIDIA runtime) and runs Debian's, and returns
  // `dir`/bin, to put first on a job's PATH.
  static std::string write_docker_without_gpus(const TempDir& dir);
  // dockerd's log, for a failing test's message.
  std::string log() const;

  static constexpr const char* k_image = "runner-test-debian";
  static constexpr const char* k_cache_dir = "/var/cache/runner-tests";

 private:
  DockerEngine() = default;
  bool start(std::string& why_not);

  TempDir m_dir;
  std::string m_namespace;
  pid_t m_daemon = -1;
};

}  // namespace runner::testing

// In a test body, after `DockerEngine* engine = DockerEngine::shared(why_not)`:
// skips the test when this machine cannot have a Docker engine, but fails it
// when CI=true (tests run as root there, with scripts/setup.sh's packages).
#define RUNNER_REQUIRE_DOCKER_ENGINE(ptr, why_not)                                   \
  do {                                                                               \
    if (!(ptr)) {                                                                    \
      if (::runner::testing::setup_required()) {                                     \
        FAIL() << "no Docker engine (" << (why_not) << "), and CI=true requires it"; \
      }                                                                              \
      GTEST_SKIP() << "no Docker engine: " << (why_not);                             \
    }                                                                                \
  } while (false)
