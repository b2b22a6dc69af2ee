// hosts.yaml: the fleet. Parses the file and expands every entry into slots
// (the cartesian product of its lists), grouping slots by host. Pure: reads
// only the text it is given.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/gpu_free.h"
#include "runner/config/params.h"
#include "runner/core/result.h"

namespace runner {

// Where a host is reached. `local` is true only for `localhost` (in any
// case), `127.0.0.1` or `::1` written alone (no user, no port): it runs jobs
// as local processes.
struct HostAddress {
  std::string user;  // empty: the current user / ssh config decides
  std::string host;  // name or address, without brackets for IPv6
  int port = 0;      // 0: default (22 / ssh config)
  bool local = false;
};

// Parses `host`, `user@host`, `host:port`, `user@host:port`, `[v6]:port`,
// `[v6]`. A failure (without position) on a malformed port or an empty
// host.
Result<HostAddress> parse_host_address(std::string_view text);

// One unit of capacity: runs one job at a time.
struct Slot {
  int host = 0;       // index into Fleet::hosts
  int index = 0;      // 0-based position among its host's slots
  Params params;      // host parameters of this slot, file order, no `hostname`
  std::string label;  // for output prefixes: "node01 gpu=0", "node01 #2", "node01"
  int line = 0;       // hosts.yaml line of the entry that gave it
  // The product element of hosts.yaml that gave it: the slots `slots: N`
  // makes of one element share it. -1: an element of its own.
  int element = -1;
  // Its entry's `gpu_free:`: a job starts on it only while its GPU is free.
  std::optional<GpuFreeRule> gpu_free;
  // Its entry's `gpu_monitor:` (on unless `off`): its GPU's energy and use
  // are read while jobs run on it.
  bool gpu_monitor = true;
  // Whether its entry says `gpu_monitor: on`: its host is expected to have
  // GPUs to read.
  bool gpu_monitor_asked = false;
};

// All slots that share one hostname (after templating). Reached over one
// pool of connections.
struct Host {
  std::string name;  // the hostname string as the user wrote/rendered it
  HostAddress address;
  std::vector<int> slots;  // indices into Fleet::slots, in slot-index order
  int line = 0;            // hosts.yaml line of the first entry naming it
};

struct Fleet {
  std::vector<Host> hosts;
  std::vector<Slot> slots;
};

// The keys of a hosts.yaml entry with a meaning of their own, never host
// parameters: `hostname`, `slots`, `gpu_free`, `gpu_monitor`.
std::span<const std::string_view> reserved_host_keys();

// Parses hosts.yaml text. `path` is used in error messages only.
// Rules (SPEC section 1):
//  - the document is a YAML sequence; an empty document is an error
//    ("no hosts");
//  - an item is a scalar hostname, or a mapping with key `hostname`
//    (scalar or list) plus parameters (scalar or list of scalars);
//  - a mapping expands to the cartesian product of its lists, `hostname`
//    slowest, then the other keys in file order, the last fastest;
//  - `slots: N` (positive integer) gives N anonymous slots per hostname,
//    combined with any other parameters;
//  - `hostname` may contain templates (<<x>> / {{ x }}) of its entry's
//    parameters; it is rendered per product element;
//  - slots of the same rendered hostname form one Host, indices continuing
//    across entries.
// Every failure names path, line and column (Status::at), e.g. an entry
// without `hostname`, a nested mapping as a value, an empty list.
Result<Fleet> parse_hosts(std::string_view text, const std::string& path);

// Reads and parses the file; a missing file is a failure saying so.
Result<Fleet> load_hosts(const std::string& path);

// One warning for each slot that repeats an earlier slot: the same host
// with the same parameters (at least one, as `gpu: 0`), so two jobs would
// share what the parameters name. It names both lines of `path` and the fix.
// A repeat is allowed (Pegasus files list a host twice on purpose too);
// slots without parameters, and the slots `slots: N` gives one element,
// are never repeats.
std::vector<std::string> repeated_slot_warnings(const Fleet& fleet, const std::string& path);

}  // namespace runner
