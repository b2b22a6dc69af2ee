#include "runner/exec/slurm/slurm_allocation.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

TEST(SlurmAllocation, IndexListsExpandRanges) {
  EXPECT_EQ(parse_index_list("0-1"), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_index_list("3,0-1"), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(parse_index_list("2"), (std::vector<int>{2}));
  EXPECT_TRUE(parse_index_list("x").empty());
  EXPECT_TRUE(parse_index_list("3-1").empty());
}

// As scontrol 22.05 prints `show job -d` of `salloc -N2 --gres=gpu:2`.
constexpr const char* k_job_details = R"(JobId=7 JobName=interactive
   JobState=RUNNING Reason=None Dependency=(null)
   NodeList=n[1-2]
   TRES=cpu=2,node=2,billing=2
   JOB_GRES=gpu:4
     Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)
     Nodes=n[2-3] CPU_IDs=0-1 Mem=0 GRES=gpu:tesla:1(IDX:3),nic:1(IDX:0)
     Nodes=n4 CPU_IDs=0 Mem=0 GRES=
   TresPerNode=gres:gpu:2
)";

TEST(SlurmAllocation, JobDetailsGiveEachNodeListsGpus) {
  std::vector<SlurmGresLine> lines = parse_job_details(k_job_details);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].nodes, "n1");
  EXPECT_EQ(lines[0].gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(lines[1].nodes, "n[2-3]");
  EXPECT_EQ(lines[1].gpus, (std::vector<int>{3}));
  EXPECT_TRUE(lines[2].gpus.empty());
}

TEST(SlurmAllocation, JobDetailsSayHowManyCpusAndHowMuchMemoryEachNodeHolds) {
  std::vector<SlurmGresLine> lines = parse_job_details(
      "     Nodes=n1 CPU_IDs=0-3 Mem=8192 GRES=gpu:2(IDX:0-1)\n"
      "     Nodes=n2 CPU_IDs=0,2 Mem=0 GRES=gpu:2(IDX:0-1)\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].cpus, 4);
  EXPECT_EQ(lines[0].memory_mb, 8192);
  EXPECT_EQ(lines[1].cpus, 2);
  EXPECT_EQ(lines[1].memory_mb, 0);
}

TEST(SlurmAllocation, StepsOfAGpuSlotShareTheNodesCpusAndMemory) {
  SlurmNode node{"n1", {0, 1}, 4, 8192};
  Fleet fleet = slurm_fleet(SlurmAllocation{"7", {node}}, 0);
  std::optional<SlotShare> share = slot_share(node, fleet, 0);
  ASSERT_TRUE(share.has_value());
  EXPECT_EQ(share->cpus, 2);
  EXPECT_EQ(share->memory_mb, 4096);
}

TEST(SlurmAllocation, StepsOverlapWhereTheyCannotEachHoldAGpu) {
  // Fewer CPUs than GPU slots: a second step would wait for the first's CPU.
  SlurmNode one_cpu{"n1", {0, 1}, 1, 0};
  EXPECT_FALSE(slot_share(one_cpu, slurm_fleet(SlurmAllocation{"7", {one_cpu}}, 0), 0));
  // Slots that are not the node's GPUs (--slots-per-node).
  SlurmNode node{"n1", {0, 1}, 8, 0};
  EXPECT_FALSE(slot_share(node, slurm_fleet(SlurmAllocation{"7", {node}}, 4), 0));
  // No GPU at all.
  SlurmNode cpu_only{"n1", {}, 8, 0};
  EXPECT_FALSE(slot_share(cpu_only, slurm_fleet(SlurmAllocation{"7", {cpu_only}}, 0), 0));
}

TEST(SlurmAllocation, NodeListIsReadFromItsLineAlone) {
  EXPECT_EQ(job_detail_field(k_job_details, "NodeList="), "n[1-2]");
  EXPECT_EQ(job_detail_field(k_job_details, "JobId="), "7");
}

TEST(SlurmAllocation, FleetHasASlotPerGpuOrPerNodeAsAsked) {
  SlurmAllocation allocation{"7", {{"n1", {0, 1}}, {"n2", {}}}};
  Fleet per_gpu = slurm_fleet(allocation, 0);
  ASSERT_EQ(per_gpu.hosts.size(), 2u);
  ASSERT_EQ(per_gpu.slots.size(), 3u);
  EXPECT_EQ(per_gpu.slots[1].label, "n1 gpu=1");
  EXPECT_EQ(per_gpu.slots[1].params, (Params{{"gpu", "1"}}));
  EXPECT_EQ(per_gpu.slots[2].label, "n2");
  EXPECT_EQ(per_gpu.hosts[1].slots, (std::vector<int>{2}));

  Fleet three_each = slurm_fleet(allocation, 3);
  ASSERT_EQ(three_each.slots.size(), 6u);
  EXPECT_EQ(three_each.slots[4].label, "n2 #1");
  EXPECT_TRUE(three_each.slots[4].params.empty());
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST(SlurmAllocation, EndTimeIsReadAsLocalTime) {
  std::tm local{};
  local.tm_year = 2026 - 1900;
  local.tm_mon = 10;
  local.tm_mday = 25;
  local.tm_hour = 13;
  local.tm_min = 5;
  local.tm_isdst = -1;
  EXPECT_EQ(parse_slurm_time("2026-11-25T13:05:00"),
            std::chrono::system_clock::from_time_t(std::mktime(&local)));
  EXPECT_EQ(parse_slurm_time("Unknown"), std::nullopt);
  EXPECT_EQ(parse_slurm_time("2026-11-25T13:05:00x"), std::nullopt);
  EXPECT_EQ(parse_slurm_time(job_detail_field("JobId=7 EndTime=2026-11-25T13:05:00 Deadline=N/A",
                                              "EndTime=")),
            std::chrono::system_clock::from_time_t(std::mktime(&local)));
}

}  // namespace
}  // namespace runner
