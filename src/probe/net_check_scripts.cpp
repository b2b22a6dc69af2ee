// The scripts of `runner check --net` and their parsers; see
// net_check_scripts.h. Every script is plain POSIX sh around one tool.
#include "runner/probe/net_check_scripts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "runner/config/tcp_sockets.h"
#include "runner/core/shell_quote.h"

namespace runner {

namespace {

// ip and ifconfig live in /sbin for users other than root on some systems.
// The tcp listing is last and cut after the local address, so that a busy
// host's sockets fit the output the runner keeps of its own commands.
constexpr const char* k_survey = R"(PATH="$PATH:/sbin:/usr/sbin"
for tool in python3 perl nc bash timeout; do
  command -v "$tool" >/dev/null 2>&1 && echo "tool $tool"
done
if command -v ip >/dev/null 2>&1 && listing=$(ip -o addr show 2>/dev/null); then
  echo '== ip -o addr'; printf '%s\n' "$listing"
elif command -v ifconfig >/dev/null 2>&1 && listing=$(ifconfig -a 2>/dev/null); then
  echo '== ifconfig -a'; printf '%s\n' "$listing"
else
  echo '== /proc/net/if_inet6'; cat /proc/net/if_inet6 2>/dev/null
  echo '== /proc/net/fib_trie'; cat /proc/net/fib_trie 2>/dev/null
  echo '== /proc/net/route'; cat /proc/net/route 2>/dev/null
fi
echo '== /proc/net/tcp'; cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | cut -c1-44
)";

// Arguments: port, token, lifetime. One socket per family, so that a host
// without IPv6 (or without IPv4) still listens on the other; a port in use
// in either family is an error, lest that family's probes meet another
// program. A listener closes a connection only once its prober has: the
// side that closes first keeps the port in TIME_WAIT for a minute, and the
// port must stay free for the multi-node jobs that follow the check.
constexpr const char* k_python_listener = R"(import errno, select, socket, sys, time
port, token, end = int(sys.argv[1]), sys.argv[2], time.time() + float(sys.argv[3])
listeners, why = [], ""
for family, anywhere in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((anywhere, port))
        s.listen(64)
        listeners.append(s)
    except OSError as e:
        why = e.strerror or str(e)
        if e.errno == errno.EADDRINUSE:
            listeners = []
            break
if not listeners:
    print("cannot listen on port %d: %s" % (port, why), flush=True)
    sys.exit(1)
print("listening", flush=True)
answered = []
while time.time() < end:
    ready, _, _ = select.select(listeners + answered, [], [], max(0.0, end - time.time()))
    for s in ready:
        if s in answered:
            answered.remove(s)
            s.close()
            continue
        try:
            c, _ = s.accept()
            c.sendall((token + "\n").encode())
            answered.append(c)
        except OSError:
            pass
)";

constexpr const char* k_perl_listener = R"(use IO::Select; use IO::Socket::INET;
my ($port, $token, $life) = @ARGV; my $end = time + $life; my (@listeners, $why, $in_use);
if (eval { require IO::Socket::IP; 1 }) {
  my $s = IO::Socket::IP->new(LocalHost => "::", LocalPort => $port, Listen => 64,
                              ReuseAddr => 1, V6Only => 1);
  if ($s) { push @listeners, $s } else { $why = "$!"; $in_use ||= $!{EADDRINUSE} }
}
my $s4 = IO::Socket::INET->new(LocalAddr => "0.0.0.0", LocalPort => $port, Listen => 64,
                               ReuseAddr => 1, Proto => "tcp");
if ($s4) { push @listeners, $s4 } else { $why = "$!"; $in_use ||= $!{EADDRINUSE} }
if (!@listeners || $in_use) { print "cannot listen on port $port: $why\n"; exit 1 }
$| = 1; print "listening\n";
my %listening = map { $_ => 1 } @listeners;
my $select = IO::Select->new(@listeners);
while ((my $left = $end - time) > 0) {
  for my $s ($select->can_read($left)) {
    if (!$listening{$s}) { $select->remove($s); close $s; next }
    my $c = $s->accept or next; $c->autoflush(1); print $c "$token\n"; $select->add($c);
  }
}
)";

// nc serves one connection and exits (once the prober has closed it), and
// gives no sign that it listens: it is started again after each, and a
// watchdog ends the whole process group when the lifetime is over.
// Arguments: port, token, lifetime.
constexpr const char* k_nc_listener = R"((sleep "$3"; kill -9 0) >/dev/null 2>&1 &
echo listening
failures=0
while [ "$failures" -lt 3 ]; do
  if printf '%s\n' "$2" | nc -l -p "$1" >/dev/null 2>&1 ||
     printf '%s\n' "$2" | nc -l "$1" >/dev/null 2>&1; then
    failures=0
  else
    failures=$((failures + 1)); sleep 1
  fi
done
echo "cannot listen on port $1: nc -l fails"
exit 1
)";

// Arguments: address, port, timeout. Each prints one line: what the
// listener said, or why nothing.
constexpr const char* k_python_attempt = R"(import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3]))
    print(s.makefile().readline().strip() or "closed without a word")
except Exception as e:
    print(getattr(e, "strerror", None) or str(e) or type(e).__name__)
)";

constexpr const char* k_perl_attempt = R"(my ($host, $port, $timeout) = @ARGV;
$SIG{ALRM} = sub { print "timed out\n"; exit 1 }; alarm $timeout;
my $s;
if (eval { require IO::Socket::IP; 1 }) {
  $s = IO::Socket::IP->new(PeerHost => $host, PeerPort => $port, Timeout => $timeout);
} else {
  require IO::Socket::INET;
  $s = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Timeout => $timeout);
}
if (!$s) { print "$!\n"; exit 1 }
my $line = <$s>; $line = "" unless defined $line; chomp $line;
print(($line eq "" ? "closed without a word" : $line), "\n");
)";

constexpr const char* k_bash_attempt =
    R"(exec 3<>"/dev/tcp/$1/$2" || exit 1; IFS= read -r -t "$3" line <&3; )"
    R"(printf '%s\n' "${line:-closed without a word}")";

bool has(const std::vector<std::string>& tools, std::string_view tool) {
  return std::find(tools.begin(), tools.end(), tool) != tools.end();
}

std::optional<std::string> first_of(const std::vector<std::string>& tools,
                                    std::initializer_list<std::string_view> preference) {
  for (std::string_view tool : preference) {
    if (has(tools, tool)) return std::string(tool);
  }
  return std::nullopt;
}

// The sh command line that runs one attempt with its arguments "$1" "$2" "$3".
std::string attempt_command(const std::string& tool, const std::vector<std::string>& tools) {
  if (tool == "python3") return "python3 -c " + shell_quote(k_python_attempt) + " \"$@\"";
  if (tool == "perl") return "perl -e " + shell_quote(k_perl_attempt) + " \"$@\"";
  if (tool == "bash") {
    // Without timeout(1), a connect to a silent address waits for the kernel.
    return std::string(has(tools, "timeout") ? "timeout \"$3\" " : "") + "bash -c " +
           shell_quote(k_bash_attempt) + " attempt \"$@\"";
  }
  return "nc -w \"$3\" \"$1\" \"$2\" </dev/null";
}

}  // namespace

std::string host_survey_command() { return k_survey; }

HostSurvey parse_host_survey(std::string_view output) {
  HostSurvey survey;
  std::map<std::string, std::string> sections;
  std::string* section = nullptr;
  std::istringstream lines{std::string(output)};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("== ", 0) == 0) {
      section = &sections[line.substr(3)];
    } else if (section) {
      *section += line + "\n";
    } else if (line.rfind("tool ", 0) == 0) {
      survey.tools.push_back(line.substr(5));
    }
  }
  if (sections.count("ip -o addr")) {
    survey.interfaces_from = "ip -o addr";
    survey.addresses = parse_ip_addr(sections["ip -o addr"]);
  } else if (sections.count("ifconfig -a")) {
    survey.interfaces_from = "ifconfig -a";
    survey.addresses = parse_ifconfig(sections["ifconfig -a"]);
  } else if (sections.count("/proc/net/route")) {
    survey.interfaces_from = "/proc/net";
    survey.addresses = parse_proc_net_addresses(
        sections["/proc/net/if_inet6"], sections["/proc/net/fib_trie"], sections["/proc/net/route"]);
  }
  survey.ports_in_use = ports_in_use(sections["/proc/net/tcp"]);
  return survey;
}

std::optional<std::string> listener_tool(const std::vector<std::string>& tools) {
  return first_of(tools, {"python3", "perl", "nc"});
}

std::string listener_command(const std::string& tool, int port, const std::string& token,
                             int lifetime_seconds) {
  std::string arguments =
      fmt::format(" {} {} {}", port, shell_quote(token), lifetime_seconds);
  if (tool == "python3") return "exec python3 -c " + shell_quote(k_python_listener) + arguments;
  if (tool == "perl") return "exec perl -e " + shell_quote(k_perl_listener) + arguments;
  return "sh -c " + shell_quote(k_nc_listener) + " listener" + arguments;
}

std::optional<std::string> prober_tool(const std::vector<std::string>& tools) {
  return first_of(tools, {"python3", "perl", "bash", "nc"});
}

std::string prober_command(const std::string& tool, const std::vector<std::string>& tools,
                           const std::vector<ProbeTarget>& targets, int timeout_seconds) {
  std::string script = "attempt() { " + attempt_command(tool, tools) + " 2>&1 | head -n 1; }\n";
  script +=
      "probe() {\n"
      "  said=$(attempt \"$1\" \"$2\" \"$4\")\n"
      "  if [ \"$said\" != \"$3\" ]; then sleep 1; said=$(attempt \"$1\" \"$2\" \"$4\"); fi\n"
      "  printf 'probe %s %s %s\\n' \"$1\" \"$2\" \"${said:-no answer}\"\n"
      "}\n";
  for (const ProbeTarget& target : targets) {
    script += fmt::format("probe {} {} {} {} &\n", shell_quote(target.address), target.port,
                          shell_quote(target.token), timeout_seconds);
  }
  return script + "wait\n";
}

std::vector<ProbeAnswer> parse_probe_answers(std::string_view output) {
  std::vector<ProbeAnswer> answers;
  std::istringstream lines{std::string(output)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string word, address, port;
    if (!(fields >> word >> address >> port) || word != "probe" ||
        port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) {
      continue;
    }
    std::string said;
    std::getline(fields >> std::ws, said);
    while (!said.empty() && (said.back() == '\r' || said.back() == ' ')) said.pop_back();
    answers.push_back({address, std::stoi(port), said});
  }
  return answers;
}

}  // namespace runner
