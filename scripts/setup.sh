#!/usr/bin/env bash
# Installs what runner needs to build, from Debian's packages, and with
# --tests what its tests run against too (sshd, shells, torch, Open MPI,
# Slurm, Chromium, Docker). Does nothing when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libssh2-1-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  nlohmann-json3-dev libgtest-dev
  libsimdjson-dev  # parses journal lines a few times faster than nlohmann-json: a cold reading of a long journal (src/state/journal_record_parse.cpp)
  libssl-dev  # libcrypto's SHA-256 of the files outputs: brings back (src/exec/file_digest.cpp)
  libpcre2-dev  # PCRE2 with its JIT and match limits: queue.yaml's metrics: and ready_log: patterns over job output that may hold megabyte lines (src/config/pattern.cpp)
  libjemalloc-dev  # jemalloc as runner's malloc: reading 100,000 jobs' results spent a quarter of its time in glibc's malloc and free, across the threads that read them (CMakeLists.txt)
  libarchive-dev  # unpacks the tar stream of the files outputs: brings back, a host's bytes read as hostile: no link followed, no owner or set-uid kept (src/exec/output_unpacker.cpp)
  scdoc  # the man pages runner(1), runner-hosts.yaml(5) and runner-queue.yaml(5), from docs/man/*.scd at build time (cmake/man_page.sh)
)
test_packages=(
  openssh-server openssh-client procps
  tcsh zsh fish  # login shells of the test users (tests/support/remote_user)
  parallel pdsh python3 rsync  # the peers of the benchmark suite (bench/, ctest bench_smoke)
  strace  # counts the file-system calls runner makes per job (bench/file_ops.py, tests/integration/file_ops_test)
  python3-yaml  # PyYAML, a second reader (as Pegasus reads it) of the hosts.yaml that runner hosts --detect writes (tests/integration/check_test)
  netcat-openbsd  # nc, the last tool runner check --net listens and probes with (tests/exec)
  iproute2  # `ip netns`: the multi-node test fleet, one network namespace per host (tests/support/netns_fleet)
  libcap2-bin  # setcap: the user of examples/swarm's nodes gets a tc that may shape their network (tests/integration/example_swarm_test)
  python3-torch openmpi-bin  # torchrun and mpirun, run for real across that fleet (tests/integration/multi_node_test)
  libopenmpi-dev  # mpicc's headers and libraries: examples/mpi builds its program on the fleet (tests/integration/example_mpi_test)
  slurmctld slurmd slurm-client munge  # a real Slurm cluster of one machine for runner --slurm (tests/support/slurm_cluster)
  chromium
  lintian  # the .deb is checked as Debian checks packages (tests/install/deb_package_test.sh)
  docker.io debootstrap  # a real Docker engine for the jobs that run `docker exec`, its image made offline from Debian's archive (tests/support/docker_engine)
  clang libclang-rt-14-dev  # clang++ and its libFuzzer, ASan and UBSan runtimes: the sanitized unit tests and the fuzzers (scripts/sanitize.sh, scripts/fuzz.sh)
)
[ "${1:-}" = "--tests" ] && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
