#include "runner/config/multi_node.h"

#include <fmt/format.h>

#include <array>

namespace runner {

namespace {

constexpr std::array<std::string_view, 7> k_variables = {
    "rank", "nnodes", "master_addr", "master_port", "hosts", "hostfile", "slots_per_node"};

std::string joined_addresses(const NodeLayout& layout) {
  return fmt::format("{}", fmt::join(layout.addresses, ","));
}

}  // namespace

bool is_multi_node_variable(std::string_view name) {
  for (std::string_view variable : k_variables)
    if (variable == name) return true;
  return false;
}

Params multi_node_variables(const JobSpec& job, const NodeLayout& layout, int rank) {
  return {
      {"rank", std::to_string(rank)},
      {"nnodes", std::to_string(layout.ranks.size())},
      {"master_addr", layout.addresses.at(0)},
      {"master_port", std::to_string(layout.master_port)},
      {"hosts", joined_addresses(layout)},
      {"hostfile", layout.hostfile},
      {"slots_per_node", std::to_string(job.slots)},
  };
}

Params multi_node_environment(const NodeLayout& layout, int rank) {
  return {
      {"RUNNER_RANK", std::to_string(rank)},
      {"RUNNER_NNODES", std::to_string(layout.ranks.size())},
      {"RUNNER_MASTER_ADDR", layout.addresses.at(0)},
      {"RUNNER_MASTER_PORT", std::to_string(layout.master_port)},
      {"RUNNER_HOSTFILE", layout.hostfile},
  };
}

std::string hostfile_text(const JobSpec& job, const NodeLayout& layout) {
  std::string text;
  for (const std::string& address : layout.addresses)
    text += fmt::format("{} slots={}\n", address, job.slots);
  return text;
}

std::string node_address(const Fleet& fleet, const std::vector<int>& slot_ids,
                         const std::string& reached_as) {
  for (int slot : slot_ids)
    if (auto address = find_param(fleet.slots.at(slot).params, k_address_param)) return *address;
  return reached_as;
}

int choose_master_port(const std::set<int>& in_use, const std::set<int>& given) {
  return first_free_port(k_first_master_port, in_use, given);
}

int first_free_port(int from, const std::set<int>& in_use, const std::set<int>& given) {
  for (int port = from; port < 65536; ++port)
    if (!in_use.count(port) && !given.count(port)) return port;
  return 0;
}

bool is_loopback(std::string_view address) {
  return address.substr(0, 4) == "127." || address == "::1" || address == "localhost";
}

}  // namespace runner
