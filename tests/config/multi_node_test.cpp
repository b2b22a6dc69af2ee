#include "runner/config/multi_node.h"

#include <gtest/gtest.h>

#include "support/value_of.h"

namespace runner {
namespace {

NodeLayout two_nodes() {
  NodeLayout layout;
  layout.ranks = {{0, 1}, {2, 3}};
  layout.addresses = {"10.1.0.11", "10.1.0.12"};
  layout.master_port = 29501;
  layout.hostfile = "/tmp/runner-ab12-7.hostfile";
  return layout;
}

TEST(MultiNode, VariablesOfEachRank) {
  JobSpec job{"train", {}, 2, 1};
  EXPECT_EQ(multi_node_variables(job, two_nodes(), 1),
            (Params{{"rank", "1"},
                    {"nnodes", "2"},
                    {"master_addr", "10.1.0.11"},
                    {"master_port", "29501"},
                    {"hosts", "10.1.0.11,10.1.0.12"},
                    {"hostfile", "/tmp/runner-ab12-7.hostfile"},
                    {"slots_per_node", "2"}}));
  for (const auto& [name, value] : multi_node_variables(job, two_nodes(), 0))
    EXPECT_TRUE(is_multi_node_variable(name)) << name;
  EXPECT_FALSE(is_multi_node_variable("hostname"));
}

TEST(MultiNode, EnvironmentOfEachRank) {
  EXPECT_EQ(multi_node_environment(two_nodes(), 0),
            (Params{{"RUNNER_RANK", "0"},
                    {"RUNNER_NNODES", "2"},
                    {"RUNNER_MASTER_ADDR", "10.1.0.11"},
                    {"RUNNER_MASTER_PORT", "29501"},
                    {"RUNNER_HOSTFILE", "/tmp/runner-ab12-7.hostfile"}}));
}

TEST(MultiNode, HostfileHasALinePerNodeInRankOrder) {
  JobSpec job{"mpirun", {}, 4, 1};
  EXPECT_EQ(hostfile_text(job, two_nodes()), "10.1.0.11 slots=4\n10.1.0.12 slots=4\n");
}

TEST(MultiNode, AnAddrParameterNamesTheNode) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: node01\n  addr: 192.168.7.1\n  slots: 2\n- hostname: node02\n  slots: 2\n",
      "hosts.yaml"));
  EXPECT_EQ(node_address(fleet, {0, 1}, "node01.example"), "192.168.7.1");
  EXPECT_EQ(node_address(fleet, {2, 3}, "node02.example"), "node02.example");
}

TEST(MultiNode, MasterPortSkipsPortsInUseAndPortsGiven) {
  EXPECT_EQ(choose_master_port({}, {}), k_first_master_port);
  EXPECT_EQ(choose_master_port({29500, 29502}, {29501}), 29503);
  std::set<int> all;
  for (int port = k_first_master_port; port < 65536; ++port) all.insert(port);
  EXPECT_EQ(choose_master_port(all, {}), 0);
}

TEST(MultiNode, FirstFreePortStartsWhereItIsTold) {
  EXPECT_EQ(first_free_port(29400, {}, {}), 29400);
  EXPECT_EQ(first_free_port(29400, {29400, 29402}, {29401}), 29403);
  EXPECT_EQ(first_free_port(65535, {}, {}), 65535);
  EXPECT_EQ(first_free_port(65534, {65534}, {65535}), 0);
}

}  // namespace
}  // namespace runner
