// known_hosts handling for the SSH transport: key-type preference, the
// check after the handshake, and recording new keys.
#include "ssh_known_hosts.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "runner/exec/shell.h"
#include "ssh_common.h"

namespace runner::ssh {

namespace {

struct KeyType {
  int hostkey_type;    // libssh2_session_hostkey()
  int knownhost_mask;  // LIBSSH2_KNOWNHOST_KEY_*
  const char* method;  // SSH host-key algorithm name
};

// In the order we prefer them.
constexpr KeyType k_key_types[] = {
    {LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519, "ssh-ed25519"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256, "ecdsa-sha2-nistp256"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384, "ecdsa-sha2-nistp384"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521, "ecdsa-sha2-nistp521"},
    {LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA, "ssh-rsa"},
    {LIBSSH2_HOSTKEY_TYPE_DSS, LIBSSH2_KNOWNHOST_KEY_SSHDSS, "ssh-dss"},
};

const KeyType* key_type_of(int hostkey_type) {
  for (const KeyType& type : k_key_types) {
    if (type.hostkey_type == hostkey_type) return &type;
  }
  return nullptr;
}

struct KnownHostsDeleter {
  void operator()(LIBSSH2_KNOWNHOSTS* hosts) const { libssh2_knownhost_free(hosts); }
};
using KnownHostsPtr = std::unique_ptr<LIBSSH2_KNOWNHOSTS, KnownHostsDeleter>;

// Reads the file line by line: libssh2_knownhost_readfile stops at the first
// line it cannot parse (a key type it does not know, a @cert-authority
// marker), hiding every entry after it.
KnownHostsPtr load_known_hosts(LIBSSH2_SESSION* session, const std::string& path) {
  KnownHostsPtr hosts(libssh2_knownhost_init(session));
  if (!hosts) return hosts;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#' || line[start] == '@') continue;
    libssh2_knownhost_readline(hosts.get(), line.c_str(), line.size(),
                               LIBSSH2_KNOWNHOST_FILE_OPENSSH);
  }
  return hosts;
}

// Whether the collection holds a key of this type for `name`: probing with a
// key that cannot match turns "some key of this type" into a mismatch.
bool has_key_of_type(LIBSSH2_KNOWNHOSTS* hosts, const std::string& name, int mask) {
  static const char k_probe[] = "runner-probe-not-a-key";
  int rc = libssh2_knownhost_checkp(
      hosts, name.c_str(), -1, k_probe, sizeof k_probe - 1,
      LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | mask, nullptr);
  return rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH;
}

std::vector<std::string> supported_host_key_methods(LIBSSH2_SESSION* session) {
  std::vector<std::string> methods;
  const char** algorithms = nullptr;
  int count = libssh2_session_supported_algs(session, LIBSSH2_METHOD_HOSTKEY, &algorithms);
  for (int i = 0; i < count; ++i) methods.emplace_back(algorithms[i]);
  if (count > 0) libssh2_free(session, algorithms);
  return methods;
}

std::string fingerprint(LIBSSH2_SESSION* session) {
  const char* hash = libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256);
  if (!hash) return "";
  std::string encoded = base64_encode(std::string_view(hash, 32));
  while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
  return "SHA256:" + encoded;
}

std::string quoted_path(const std::string& path) {
  bool plain = path.find_first_not_of(
                   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+~") ==
               std::string::npos;
  return plain ? path : shell_quote(path);
}

// Appends one line to the file, after a newline if its last line lacks one.
std::string append_line(const std::string& path, const std::string& line) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ignored;
    if (!std::filesystem::exists(parent, ignored)) {
      std::filesystem::create_directories(parent, ignored);
      chmod(parent.c_str(), 0700);
    }
  }
  int fd = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return std::strerror(errno);
  std::string text = line;
  struct stat info {};
  if (fstat(fd, &info) == 0 && info.st_size > 0) {
    char last = '\n';
    if (pread(fd, &last, 1, info.st_size - 1) == 1 && last != '\n') text.insert(0, "\n");
  }
  ssize_t written = write(fd, text.data(), text.size());
  int error_number = errno;
  close(fd);
  if (written != static_cast<ssize_t>(text.size())) return std::strerror(error_number);
  return "";
}

}  // namespace

std::string known_hosts_name(const std::string& host, int port) {
  if (port == 22 || port <= 0) return host;
  return "[" + host + "]:" + std::to_string(port);
}

std::string host_key_method_preference(LIBSSH2_SESSION* session, const HostKeyPolicy& policy) {
  std::vector<std::string> supported = supported_host_key_methods(session);
  auto is_supported = [&](const char* method) {
    for (const std::string& name : supported) {
      if (name == method) return true;
    }
    return false;
  };

  std::string name = known_hosts_name(policy.host, policy.port);
  KnownHostsPtr hosts = load_known_hosts(session, policy.known_hosts);
  std::string known;
  std::string all;
  for (const KeyType& type : k_key_types) {
    if (!is_supported(type.method)) continue;
    std::string& list =
        (hosts && has_key_of_type(hosts.get(), name, type.knownhost_mask)) ? known : all;
    list += list.empty() ? "" : ",";
    list += type.method;
  }
  if (!known.empty()) return known;
  return all;
}

std::optional<TransportError> verify_host_key(LIBSSH2_SESSION* session,
                                              const HostKeyPolicy& policy) {
  size_t key_length = 0;
  int hostkey_type = LIBSSH2_HOSTKEY_TYPE_UNKNOWN;
  const char* key = libssh2_session_hostkey(session, &key_length, &hostkey_type);
  const KeyType* type = key_type_of(hostkey_type);
  if (!key || !type) {
    return TransportError{TransportErrorKind::host_key,
                          fmt::format("{}: the server's host key is of a type this program "
                                      "cannot check",
                                      policy.display)};
  }

  std::string name = known_hosts_name(policy.host, policy.port);
  std::string described = fmt::format("{} {}", type->method, fingerprint(session));
  KnownHostsPtr hosts = load_known_hosts(session, policy.known_hosts);
  if (!hosts) {
    return TransportError{
        TransportErrorKind::host_key,
        fmt::format("{}: cannot read known hosts: {}", policy.display, last_error(session))};
  }
  int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | type->knownhost_mask;
  int verdict =
      libssh2_knownhost_checkp(hosts.get(), name.c_str(), -1, key, key_length, mask, nullptr);
  if (verdict == LIBSSH2_KNOWNHOST_CHECK_MATCH) return std::nullopt;

  if (verdict == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
    return TransportError{
        TransportErrorKind::host_key,
        fmt::format("{}: WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! The host key for {} "
                    "has changed (it is now {}) and no longer matches {}. This is a possible "
                    "man-in-the-middle attack, or the host was reinstalled. If you trust the "
                    "new key, remove the old one with: ssh-keygen -f {} -R '{}'",
                    policy.display, name, described, policy.known_hosts,
                    quoted_path(policy.known_hosts), name)};
  }

  if (!policy.accept_new) {
    std::string port_option =
        policy.port == 22 ? std::string() : fmt::format("-p {} ", policy.port);
    return TransportError{
        TransportErrorKind::host_key,
        fmt::format("{}: host key not known ({} is not in {}). If this is the right host, "
                    "record its key with: ssh-keyscan {}{} >> {} (and compare the "
                    "fingerprint), or run with --accept-new-host-keys",
                    policy.display, described, policy.known_hosts, port_option, policy.host,
                    quoted_path(policy.known_hosts))};
  }

  libssh2_knownhost* entry = nullptr;
  if (libssh2_knownhost_addc(hosts.get(), name.c_str(), nullptr, key, key_length, nullptr, 0, mask,
                             &entry) != 0 ||
      !entry) {
    return TransportError{
        TransportErrorKind::host_key,
        fmt::format("{}: cannot record the new host key: {}", policy.display, last_error(session))};
  }
  std::vector<char> line(8192);
  size_t line_length = 0;
  if (libssh2_knownhost_writeline(hosts.get(), entry, line.data(), line.size(), &line_length,
                                  LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
    return TransportError{
        TransportErrorKind::host_key,
        fmt::format("{}: cannot format the new host key: {}", policy.display, last_error(session))};
  }
  std::string failure = append_line(policy.known_hosts, std::string(line.data(), line_length));
  if (!failure.empty()) {
    return TransportError{TransportErrorKind::host_key,
                          fmt::format("{}: cannot add the new host key to {}: {}", policy.display,
                                      policy.known_hosts, failure)};
  }
  return std::nullopt;
}

}  // namespace runner::ssh
