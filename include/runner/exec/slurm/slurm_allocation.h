// The Slurm allocation a run is inside (`salloc`, `sbatch`): its job id, its
// nodes, and the GPUs it holds on each. Read from SLURM_JOB_ID and
// `scontrol`, because salloc's shell has neither SLURM_GPUS_ON_NODE nor
// SLURM_JOB_GPUS (only steps and batch scripts do), while `scontrol show
// job -d` gives every node's GPU indices (`GRES=gpu:2(IDX:0-1)`).
// Threading: none; read_slurm_allocation() blocks while scontrol runs.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/core/result.h"

namespace runner {

struct SlurmNode {
  std::string name;       // as Slurm names it, for `srun -w`
  std::vector<int> gpus;  // the allocation's GPU indices on it, ascending
  int cpus = 0;           // how many of its CPUs the allocation holds
  long memory_mb = 0;     // its memory there (0: not held as a resource)
};

struct SlurmAllocation {
  std::string job_id;
  std::vector<SlurmNode> nodes;  // in the order of SLURM_JOB_NODELIST
  // When Slurm ends it (its EndTime); unset: no time limit.
  std::optional<std::chrono::system_clock::time_point> ends_at;
};

// scontrol's EndTime ("2026-11-25T13:05:00", local time) as a time point;
// nullopt for "Unknown", "None" or anything else.
std::optional<std::chrono::system_clock::time_point> parse_slurm_time(std::string_view text);

// "0-1,3" -> {0, 1, 3}. Empty when the text is not such a list.
std::vector<int> parse_index_list(std::string_view text);

// The value of the field `key` ("NodeList=") in scontrol's `KEY=value`
// text, up to the next space or line's end; empty when absent.
std::string job_detail_field(std::string_view text, std::string_view key);

// One `Nodes=... GRES=...` line of `scontrol show job -d`: the node list
// expression and the GPU indices it gives each of those nodes.
struct SlurmGresLine {
  std::string nodes;
  std::vector<int> gpus;
  int cpus = 0;  // on each of those nodes (CPU_IDs=0-3: 4)
  long memory_mb = 0;  // Mem=, on each
};
// Every such line of the text (lines without GPUs give an empty list).
std::vector<SlurmGresLine> parse_job_details(std::string_view text);

// The allocation of the environment's SLURM_JOB_ID, or why there is none
// (not inside an allocation, scontrol missing or failing).
Result<SlurmAllocation> read_slurm_allocation();

// The fleet of an allocation: one host per node, named as Slurm names it;
// one slot per GPU with the parameter `gpu` (its index on the node, as
// scontrol shows it), or `slots_per_node` anonymous slots when positive (or
// when a node has no GPU: one slot).
Fleet slurm_fleet(const SlurmAllocation& allocation, int slots_per_node);

// What a step on a node asks for per slot, so that Slurm gives each step
// GPUs of its own: the node's GPU slot's one GPU, and an even share of the
// allocation's CPUs (and memory, where it is held) there.
struct SlotShare {
  int cpus = 1;
  long memory_mb = 0;  // 0: none asked for
};
// The share on `host` of `fleet` (slurm_fleet's) for `node`; nullopt where
// its slots are not one per GPU, or it has fewer CPUs than GPU slots: its
// steps then overlap, and each sees every GPU the allocation has there.
std::optional<SlotShare> slot_share(const SlurmNode& node, const Fleet& fleet, int host);

}  // namespace runner
