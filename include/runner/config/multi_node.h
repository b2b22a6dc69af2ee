// What the tasks of a multi-node job (`nodes: N`) see: the variables each
// rank's command is rendered with, the environment each rank's process
// gets, the hostfile every node is given, and the choice of the job's
// master port. Pure logic; where the tasks run is the scheduler's choice.
//
// Variables (beside `hostname`, `slots` and the host parameters of the
// task's own slots): `rank` (0..N-1), `nnodes` (N), `master_addr` (how the
// other nodes reach rank 0), `master_port` (a port free on rank 0's host),
// `hosts` (every node's address, comma-joined, rank order), `hostfile` (the
// path of a file on every node, one line per node, "ADDRESS slots=k", as
// mpirun and DeepSpeed read it) and `slots_per_node` (k). A node's address
// is its `addr:` host parameter when its slots define one, else the address
// its executor reaches it by; when rank 0's is a loopback address and
// another node is elsewhere, it is the first address rank 0's host has.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/params.h"
#include "runner/config/queue_entry.h"

namespace runner {

// The host parameter that names the address other nodes reach a host by.
inline constexpr std::string_view k_address_param = "addr";

// Where torchrun's own default master port is; the first port tried.
inline constexpr int k_first_master_port = 29500;

// Where the tasks of one multi-node job run, and how they find each other.
struct NodeLayout {
  std::vector<std::vector<int>> ranks;  // rank r's slots (Fleet::slots), all of one host
  std::vector<std::string> addresses;   // rank r's host, as the other nodes reach it
  int master_port = 0;
  std::string hostfile;  // its path on every node
};

// The names `rank`, `nnodes`, ... that only a multi-node job defines.
bool is_multi_node_variable(std::string_view name);

// The variables of rank `rank` of `layout` that a multi-node job adds to
// those of its slots (job_variables), in the order listed above.
Params multi_node_variables(const JobSpec& job, const NodeLayout& layout, int rank);

// What each rank's process finds in its environment: RUNNER_RANK,
// RUNNER_NNODES, RUNNER_MASTER_ADDR, RUNNER_MASTER_PORT, RUNNER_HOSTFILE.
Params multi_node_environment(const NodeLayout& layout, int rank);

// The hostfile's text: "ADDRESS slots=k\n" for every rank, in rank order.
std::string hostfile_text(const JobSpec& job, const NodeLayout& layout);

// The address other nodes reach the host of `slot_ids` by: the `addr:`
// parameter its slots define, else `reached_as`.
std::string node_address(const Fleet& fleet, const std::vector<int>& slot_ids,
                         const std::string& reached_as);

// The first port from k_first_master_port up that is neither in use on the
// host (`in_use`, from its /proc/net/tcp) nor given to another of the run's
// jobs there (`given`); 0 when none is left below 65536.
int choose_master_port(const std::set<int>& in_use, const std::set<int>& given);
// The same from any port `from` up.
int first_free_port(int from, const std::set<int>& in_use, const std::set<int>& given);

// Whether other hosts cannot use `address` to reach the host it names:
// 127.0.0.0/8, ::1, localhost.
bool is_loopback(std::string_view address);

}  // namespace runner
