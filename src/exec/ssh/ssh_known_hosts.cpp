// known_hosts handling for the SSH executor: key-type preference, the
// check after the handshake (several files, hashed names, @revoked), and
// recording new keys.
#include "ssh_known_hosts.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>
#include <vector>

#include "runner/exec/shell.h"
#include "ssh_common.h"

namespace runner::ssh {

namespace {

struct KeyType {
  int hostkey_type;     // libssh2_session_hostkey()
  int knownhost_mask;   // LIBSSH2_KNOWNHOST_KEY_*
  const char* name;     // the key's type as known_hosts writes it
  const char* methods;  // SSH host-key algorithms that use it, preferred first
};

// In the order we prefer them. OpenSSH 8.8 and later refuse ssh-rsa
// (SHA-1) signatures, so an RSA host key is asked for as rsa-sha2-* first.
constexpr KeyType k_key_types[] = {
    {LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519, "ssh-ed25519", "ssh-ed25519"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256, "ecdsa-sha2-nistp256",
     "ecdsa-sha2-nistp256"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384, "ecdsa-sha2-nistp384",
     "ecdsa-sha2-nistp384"},
    {LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521, "ecdsa-sha2-nistp521",
     "ecdsa-sha2-nistp521"},
    {LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA, "ssh-rsa",
     "rsa-sha2-512,rsa-sha2-256,ssh-rsa"},
    {LIBSSH2_HOSTKEY_TYPE_DSS, LIBSSH2_KNOWNHOST_KEY_SSHDSS, "ssh-dss", "ssh-dss"},
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

// Reads the files line by line: libssh2_knownhost_readfile stops at the
// first line it cannot parse (a key type it does not know, a marker),
// hiding every entry after it. Lines marked @revoked go to `revoked`.
KnownHostsPtr load_known_hosts(LIBSSH2_SESSION* session, const std::vector<std::string>& files,
                               LIBSSH2_KNOWNHOSTS* revoked = nullptr) {
  KnownHostsPtr hosts(libssh2_knownhost_init(session));
  if (!hosts) return hosts;
  for (const std::string& path : files) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      size_t start = line.find_first_not_of(" \t");
      if (start == std::string::npos || line[start] == '#') continue;
      if (line[start] == '@') {
        constexpr std::string_view k_revoked = "@revoked";
        if (revoked && line.compare(start, k_revoked.size(), k_revoked) == 0) {
          std::string rest = line.substr(start + k_revoked.size());
          libssh2_knownhost_readline(revoked, rest.c_str(), rest.size(),
                                     LIBSSH2_KNOWNHOST_FILE_OPENSSH);
        }
        continue;
      }
      libssh2_knownhost_readline(hosts.get(), line.c_str(), line.size(),
                                 LIBSSH2_KNOWNHOST_FILE_OPENSSH);
    }
  }
  return hosts;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
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

std::string quoted_path(const std::string& path) { return shell_word(path); }

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
  auto add_supported = [&](std::string& list, const char* methods) {
    std::istringstream names(methods);
    for (std::string method; std::getline(names, method, ',');) {
      if (std::find(supported.begin(), supported.end(), method) == supported.end()) continue;
      list += list.empty() ? "" : ",";
      list += method;
    }
  };

  std::string name = known_hosts_name(policy.host, policy.port);
  KnownHostsPtr hosts = load_known_hosts(session, policy.files);
  std::string known;
  std::string all;
  for (const KeyType& type : k_key_types) {
    bool is_known = hosts && has_key_of_type(hosts.get(), name, type.knownhost_mask);
    add_supported(is_known ? known : all, type.methods);
  }
  if (!known.empty()) return known;
  return all;
}

Result<std::string> verify_host_key(LIBSSH2_SESSION* session, const HostKeyPolicy& policy) {
  size_t key_length = 0;
  int hostkey_type = LIBSSH2_HOSTKEY_TYPE_UNKNOWN;
  const char* key = libssh2_session_hostkey(session, &key_length, &hostkey_type);
  const KeyType* type = key_type_of(hostkey_type);
  if (!key || !type) {
    return Status{ErrorKind::host_key,
                  fmt::format("{}: the server's host key is of a type this program "
                              "cannot check",
                              policy.display)};
  }

  std::string name = known_hosts_name(policy.host, policy.port);
  std::string described = fmt::format("{} {}", type->name, fingerprint(session));
  // The files worth naming: the first (where keys go), and those that exist.
  std::vector<std::string> named;
  for (const std::string& file : policy.files) {
    if (named.empty() || access(file.c_str(), F_OK) == 0) named.push_back(file);
  }
  std::string files = join(named, ", ");
  KnownHostsPtr revoked(libssh2_knownhost_init(session));
  KnownHostsPtr hosts = load_known_hosts(session, policy.files, revoked.get());
  if (!hosts || !revoked) {
    return Status{ErrorKind::host_key, fmt::format("{}: cannot read known hosts: {}",
                                                   policy.display, last_error(session))};
  }
  int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | type->knownhost_mask;
  if (libssh2_knownhost_checkp(revoked.get(), name.c_str(), -1, key, key_length, mask, nullptr) ==
          LIBSSH2_KNOWNHOST_CHECK_MATCH ||
      libssh2_knownhost_checkp(revoked.get(), "*", -1, key, key_length, mask, nullptr) ==
          LIBSSH2_KNOWNHOST_CHECK_MATCH) {
    return Status{
        ErrorKind::host_key,
        fmt::format("{}: the host key {} is marked @revoked in {}: refusing to connect. Ask the "
                    "host's administrator for its new key",
                    policy.display, described, files)};
  }
  int verdict =
      libssh2_knownhost_checkp(hosts.get(), name.c_str(), -1, key, key_length, mask, nullptr);
  if (verdict == LIBSSH2_KNOWNHOST_CHECK_MATCH) {
    return std::string("known");
  }

  if (verdict == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
    // Name the file that holds the old key, for the command that removes it.
    std::string holder = policy.files.empty() ? std::string() : policy.files.front();
    for (const std::string& file : policy.files) {
      KnownHostsPtr one = load_known_hosts(session, {file});
      if (one && libssh2_knownhost_checkp(one.get(), name.c_str(), -1, key, key_length, mask,
                                          nullptr) == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
        holder = file;
        break;
      }
    }
    return Status{
        ErrorKind::host_key,
        fmt::format("{}: WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! The host key for {} "
                    "has changed (it is now {}) and no longer matches {}. This is a possible "
                    "man-in-the-middle attack, or the host was reinstalled. If you trust the "
                    "new key, remove the old one with: ssh-keygen -f {} -R '{}'",
                    policy.display, name, described, holder, quoted_path(holder), name)};
  }

  std::string record_file = policy.files.empty() ? std::string() : policy.files.front();
  bool accept =
      policy.checking == HostKeyChecking::accept_new || policy.checking == HostKeyChecking::no;
  if (!accept) {
    std::string record = policy.record_command;
    if (record.empty()) {
      std::string port_option =
          policy.port == 22 ? std::string() : fmt::format("-p {} ", policy.port);
      record =
          fmt::format("ssh-keyscan {}{} >> {}", port_option, policy.host, quoted_path(record_file));
    }
    std::string why =
        policy.checking == HostKeyChecking::yes ? " StrictHostKeyChecking is yes for it." : "";
    return Status{
        ErrorKind::host_key,
        fmt::format("{}: host key not known ({} is not in {}).{} If this is the right host, "
                    "record its key with: {} (and compare the fingerprint), or run with "
                    "--accept-new-host-keys, or set StrictHostKeyChecking accept-new for it in "
                    "your ssh config",
                    policy.display, described, files, why, record)};
  }

  libssh2_knownhost* entry = nullptr;
  if (libssh2_knownhost_addc(hosts.get(), name.c_str(), nullptr, key, key_length, nullptr, 0, mask,
                             &entry) != 0 ||
      !entry) {
    return Status{ErrorKind::host_key, fmt::format("{}: cannot record the new host key: {}",
                                                   policy.display, last_error(session))};
  }
  std::vector<char> line(8192);
  size_t line_length = 0;
  if (libssh2_knownhost_writeline(hosts.get(), entry, line.data(), line.size(), &line_length,
                                  LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
    return Status{ErrorKind::host_key, fmt::format("{}: cannot format the new host key: {}",
                                                   policy.display, last_error(session))};
  }
  std::string failure = append_line(record_file, std::string(line.data(), line_length));
  if (!failure.empty()) {
    return Status{ErrorKind::host_key, fmt::format("{}: cannot add the new host key to {}: {}",
                                                   policy.display, record_file, failure)};
  }
  return fmt::format("new, added to {}", record_file);
}

}  // namespace runner::ssh
