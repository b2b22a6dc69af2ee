// Job variables and rendered commands on allocated slots, and the check
// before anything runs that every queued job fits the fleet and renders.
#include "runner/config/job_render.h"

#include <gtest/gtest.h>

#include "runner/config/allocation.h"
#include "runner/config/config_error.h"
#include "runner/config/template.h"
#include "support/value_of.h"

namespace runner {
namespace {

// What render_job gave, or why it gave nothing.
std::string rendered(const Result<std::string>& command) {
  return command ? *command : "(not rendered: " + command.status().message() + ")";
}

// node01: gpu 0..3 on c0,c0,c1,c1; node02: gpu 0..1; node03: one bare slot.
Fleet test_fleet() {
  return testing::value_of(
      parse_hosts("- hostname: node01\n"
                  "  container: [c0, c1]\n"
                  "  gpu: [0, 1]\n"
                  "- hostname: node02\n"
                  "  gpu: [0, 1]\n"
                  "- node03\n",
                  "hosts.yaml"));
}

JobSpec job(std::string command, Params params = {}, int slots = 1) {
  JobSpec spec;
  spec.command = std::move(command);
  spec.params = std::move(params);
  spec.slots = slots;
  spec.line = 1;
  return spec;
}

EntryKey key(std::string name, std::vector<std::string> values, int line = 1) {
  EntryKey k;
  k.name = std::move(name);
  k.was_list = values.size() > 1;
  k.values = std::move(values);
  k.line = line;
  return k;
}

QueueEntry entry(std::vector<EntryKey> keys, int line = 1, int column = 3) {
  QueueEntry e;
  e.keys = std::move(keys);
  e.line = line;
  e.column = column;
  return e;
}

QueueEntry plain_entry(std::string command, int line = 1) {
  QueueEntry e = entry({key("command", {std::move(command)}, line)}, line, 3);
  e.plain = true;
  return e;
}

// The failure of validate_jobs, as the command line reports it.
ConfigError validation_error(const std::vector<QueueEntry>& entries, const Fleet& fleet,
                             JobPlacement placement = JobPlacement::queue) {
  Status checked = validate_jobs(entries, fleet, "queue.yaml", placement);
  if (!checked) return ConfigError(checked);
  ADD_FAILURE() << "validate_jobs accepted the entries";
  return ConfigError("none");
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// 20,000 `{{#if x}}` blocks, one in the other.
std::string deeply_nested() {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{{#if x}}";
  text += "y";
  for (int i = 0; i < 20000; ++i) text += "{{/if}}";
  return text;
}

// --- job_variables / render_job -------------------------------------------

TEST(RenderJob, OneSlot) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(rendered(render_job(job("run --gpu <<gpu>> in {{ container }} on <<hostname>> slot <<slots>>"),
                       fleet, {2})),
            "run --gpu 0 in c1 on node01 slot 2");
}

TEST(RenderJob, JobParametersInBothSyntaxes) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(rendered(render_job(job("bench --model <<model>> --batch {{ batch }} "
                           "--tag {{ replace model \"/\" \"--\" }}",
                           {{"model", "meta/llama"}, {"batch", "4"}}),
                       fleet, {4})),
            "bench --model meta/llama --batch 4 --tag meta--llama");
}

TEST(RenderJob, MultiSlotJobSeesCommaJoinedValuesInSlotOrder) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(
      rendered(render_job(job("CUDA_VISIBLE_DEVICES=<<gpu>> <<container>> <<slots>>", {}, 2), fleet, {2, 3})),
      "CUDA_VISIBLE_DEVICES=0,1 c1,c1 2,3");
  EXPECT_EQ(rendered(render_job(job("<<gpu>> <<slots>>", {}, 3), fleet, {3, 0, 1})), "1,0,1 3,0,1");
}

// As Pegasus renders: the host's parameters are laid over the job's.
TEST(RenderJob, HostParameterWinsOverJobParameter) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(rendered(render_job(job("<<gpu>>", {{"gpu", "7"}}), fleet, {1})), "1");
  EXPECT_EQ(rendered(render_job(job("<<gpu>> <<container>>", {{"gpu", "7"}, {"container", "x"}}, 2), fleet,
                       {0, 1})),
            "0,1 c0,c0");
  Fleet local = testing::value_of(parse_hosts("- hostname: localhost\n  gpu: 0\n", "hosts.yaml"));
  EXPECT_EQ(
      rendered(render_job(job("gpu=<<gpu>> host=<<hostname>>", {{"gpu", "7"}, {"hostname", "elsewhere"}}),
                 local, {0})),
      "gpu=0 host=localhost");
}

TEST(RenderJob, JobParameterFillsInWhereTheHostLacksIt) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(rendered(render_job(job("<<gpu>>", {{"gpu", "7"}}), fleet, {6})), "7");
}

// A host written `slots: N` describes the host, not each slot: a job holding
// several of its slots sees each host parameter once, as in Pegasus.
TEST(RenderJob, SlotsOfASlotsEntryShareOneValue) {
  Fleet fleet =
      testing::value_of(parse_hosts("- hostname: cloud-01\n  slots: [4]\n  node_type: cloud\n"
                                    "- hostname: dgx\n  slots: 2\n  gpu: [0, 1]\n",
                                    "hosts.yaml"));
  EXPECT_EQ(rendered(render_job(job("--node-type <<node_type>> <<slots>>", {}, 4), fleet, {0, 1, 2, 3})),
            "--node-type cloud 0,1,2,3");
  EXPECT_EQ(slots_label(fleet, {0, 1, 2, 3}), "cloud-01 node_type=cloud #0,1,2,3");
  EXPECT_EQ(rendered(render_job(job("<<gpu>>", {}, 2), fleet, {4, 5})), "0");
  EXPECT_EQ(rendered(render_job(job("<<gpu>>", {}, 2), fleet, {5, 6})), "0,1");
  EXPECT_EQ(slots_label(fleet, {5, 6}), "dgx gpu=0,1");
  EXPECT_EQ(slots_label(fleet, {4, 5}), "dgx gpu=0 #0,1");
}

TEST(RenderJob, HostnameIsTheHostNameAsWritten) {
  Fleet fleet =
      testing::value_of(parse_hosts("- hostname: user@node09:2222\n  gpu: 0\n", "hosts.yaml"));
  EXPECT_EQ(rendered(render_job(job("<<hostname>>"), fleet, {0})), "user@node09:2222");
}

TEST(RenderJob, UndefinedVariableIsSaid) {
  Fleet fleet = test_fleet();
  Result<std::string> command = render_job(job("<<gpu>> <<nope>>"), fleet, {0});
  ASSERT_FALSE(command);
  EXPECT_EQ(command.status().kind(), ErrorKind::undefined);
  EXPECT_EQ(command.status().message(), "<<nope>> is not defined");
}

TEST(RenderJob, HostParameterMissingOnASlotIsUndefined) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(render_job(job("<<gpu>>"), fleet, {6}).status().kind(), ErrorKind::undefined);
  Fleet mixed = testing::value_of(
      parse_hosts("- hostname: a\n  gpu: 0\n- hostname: a\n  nic: eth1\n", "h.yaml"));
  EXPECT_EQ(rendered(render_job(job("<<gpu>>"), mixed, {0})), "0");
  EXPECT_EQ(render_job(job("<<gpu>>", {}, 2), mixed, {0, 1}).status().kind(), ErrorKind::undefined);
  EXPECT_EQ(render_job(job("<<nic>>", {}, 2), mixed, {0, 1}).status().kind(), ErrorKind::undefined);
}

// A daemon renders a job appended to its queue: too deep is an error it
// reports, not a crash.
TEST(RenderJob, TemplateNestedTooDeeplyIsAnError) {
  Result<std::string> command = render_job(job(deeply_nested(), {{"x", "1"}}), test_fleet(), {0});
  ASSERT_FALSE(command);
  EXPECT_TRUE(contains(command.status().message(), "nested too deeply"))
      << command.status().message();
}

TEST(RenderJob, NonTemplateTextPassesThrough) {
  Fleet fleet = test_fleet();
  const std::string command = "cat <<EOF\n{\"a\": $((1<<2))}\nEOF";
  EXPECT_EQ(rendered(render_job(job(command), fleet, {0})), command);
}

TEST(JobVariables, OrderAndShadowing) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(job_variables(job("x", {{"model", "m"}, {"gpu", "9"}}, 2), fleet, {0, 1}),
            (Params{{"hostname", "node01"},
                    {"slots", "0,1"},
                    {"allocation_policy", "first_fit"},
                    {"container", "c0,c0"},
                    {"gpu", "0,1"},
                    {"model", "m"}}));
}

// Pegasus renders the policy it obeys: `--policy {{allocation_policy}}`.
TEST(JobVariables, AllocationPolicyIsAVariableAsInPegasus) {
  Fleet fleet = test_fleet();
  JobSpec buddy = job("--policy {{allocation_policy}} --gpus <<slots>>", {}, 2);
  buddy.allocation = Allocation::buddy;
  EXPECT_EQ(rendered(render_job(buddy, fleet, {2, 3})), "--policy buddy --gpus 2,3");
  EXPECT_EQ(rendered(render_job(job("<<allocation_policy>>"), fleet, {0})), "first_fit");
}

TEST(JobVariables, HostnameIsAlwaysTheSlotsHost) {
  Fleet fleet = test_fleet();
  EXPECT_EQ(rendered(render_job(job("<<hostname>>", {{"hostname", "mine"}}), fleet, {0})), "node01");
  EXPECT_EQ(rendered(render_job(job("<<hostname>>", {{"hostname", "mine"}}), fleet, {6})), "node03");
}

// --- validate_jobs ---------------------------------------------------------

TEST(ValidateJobs, AcceptsJobsThatFitAndRender) {
  Fleet fleet = test_fleet();
  std::vector<QueueEntry> entries = {
      plain_entry("nvidia-smi"),
      plain_entry("echo <<hostname>> <<slots>>"),
      entry({key("command", {"run <<model>> --tag {{ replace model '/' '-' }}"}),
             key("model", {"a/b", "c/d"})}),
  };
  EXPECT_TRUE(validate_jobs(entries, fleet, "queue.yaml"));
}

TEST(ValidateJobs, AcceptsEmptyQueue) {
  EXPECT_TRUE(validate_jobs({}, test_fleet(), "queue.yaml"));
}

TEST(ValidateJobs, TooManySlots) {
  Fleet fleet = test_fleet();
  ConfigError error = validation_error(
      {plain_entry("ok"), entry({key("command", {"x"}), key("slots", {"5"}, 4)}, 3, 3)}, fleet);
  EXPECT_EQ(error.file(), "queue.yaml");
  EXPECT_EQ(error.line(), 3);
  EXPECT_EQ(error.column(), 3);
  EXPECT_EQ(error.detail(), "job needs 5 slots but the largest host has 4 (node01)");
}

TEST(ValidateJobs, TooManySlotsInAListOfSlotCounts) {
  Fleet fleet = test_fleet();
  ConfigError error =
      validation_error({entry({key("command", {"x"}), key("slots", {"1", "8", "2"})}, 7)}, fleet);
  EXPECT_EQ(error.line(), 7);
  EXPECT_TRUE(contains(error.detail(), "job needs 8 slots")) << error.what();
}

TEST(ValidateJobs, SlotsUpToTheLargestHostAreFine) {
  Fleet fleet = test_fleet();
  EXPECT_TRUE(
      validate_jobs({entry({key("command", {"x"}), key("slots", {"4"})})}, fleet, "queue.yaml")
          .ok());
}

TEST(ValidateJobs, VariableNoHostDefines) {
  Fleet fleet = test_fleet();
  ConfigError error = validation_error(
      {plain_entry("a"), entry({key("command", {"run <<modle>>"}), key("model", {"m"})}, 2, 3)},
      fleet);
  EXPECT_EQ(error.line(), 2);
  EXPECT_EQ(error.column(), 3);
  EXPECT_TRUE(contains(error.detail(), "`modle`")) << error.what();
  EXPECT_TRUE(contains(error.detail(), "not defined")) << error.what();
  EXPECT_EQ(std::string(error.what()).rfind("queue.yaml:2:3: ", 0), 0u) << error.what();
}

TEST(ValidateJobs, UndefinedAngleNameOffersTheEscape) {
  Fleet fleet = test_fleet();
  ConfigError error = validation_error({plain_entry("cat <<EOF>>out.txt", 4)}, fleet);
  EXPECT_EQ(error.line(), 4);
  EXPECT_TRUE(contains(error.detail(), "`EOF`")) << error.what();
  EXPECT_TRUE(contains(error.detail(), "\\<<EOF>>")) << error.what();
}

TEST(ValidateJobs, HeredocAndArithmeticNeedNoVariables) {
  Fleet fleet = test_fleet();
  EXPECT_TRUE(validate_jobs({plain_entry("cat <<EOF >> out.txt\nx\nEOF\necho $(( 1 << 4 >> 2 ))"),
                             plain_entry("cat <<EOF>>out.txt\nx\nEOF\necho $((1<<n>>2))")},
                            fleet, "queue.yaml"));
}

TEST(ValidateJobs, UnknownHelperIsReportedWithItsLine) {
  Fleet fleet = test_fleet();
  ConfigError error =
      validation_error({plain_entry("a"), plain_entry("echo {{ to_upper m }}", 7)}, fleet);
  EXPECT_EQ(error.line(), 7);
  EXPECT_TRUE(contains(error.detail(), "`to_upper`")) << error.what();
  EXPECT_EQ(std::string(error.what()).rfind("queue.yaml:7:3: ", 0), 0u) << error.what();
}

TEST(ValidateJobs, VariableSomeHostsLackNamesThem) {
  Fleet fleet = test_fleet();
  ConfigError error = validation_error({plain_entry("run --gpu <<gpu>>", 5)}, fleet);
  EXPECT_EQ(error.line(), 5);
  EXPECT_TRUE(contains(error.detail(), "`gpu`")) << error.what();
  EXPECT_TRUE(contains(error.detail(), "node03 lacks it")) << error.what();
  EXPECT_FALSE(contains(error.detail(), "node01")) << error.what();
}

TEST(ValidateJobs, HostsTooSmallForTheJobNeedNotDefineIt) {
  Fleet fleet = test_fleet();
  EXPECT_TRUE(validate_jobs({entry({key("command", {"<<gpu>>"}), key("slots", {"2"})})}, fleet,
                            "queue.yaml"));
  ConfigError error =
      validation_error({entry({key("command", {"<<container>>"}), key("slots", {"2"})})}, fleet);
  EXPECT_TRUE(contains(error.detail(), "node02 lacks it")) << error.what();
  EXPECT_FALSE(contains(error.detail(), "node03")) << error.what();
}

TEST(ValidateJobs, SmallestSlotCountOfTheEntryDecidesWhichHostsMustDefineIt) {
  Fleet fleet = test_fleet();
  ConfigError error =
      validation_error({entry({key("command", {"<<gpu>>"}), key("slots", {"2", "1"})})}, fleet);
  EXPECT_TRUE(contains(error.detail(), "node03")) << error.what();
}

TEST(ValidateJobs, HostDefiningOnSomeSlotsOnlyIsNamed) {
  Fleet fleet = testing::value_of(
      parse_hosts("- hostname: a\n  gpu: 0\n- hostname: a\n  nic: eth1\n", "h.yaml"));
  ConfigError error = validation_error({plain_entry("<<gpu>>")}, fleet);
  EXPECT_TRUE(contains(error.detail(), "a (some slots) lacks it")) << error.what();
}

TEST(ValidateJobs, JobParameterDefinesIt) {
  Fleet fleet = test_fleet();
  EXPECT_TRUE(validate_jobs(
      {entry({key("command", {"<<gpu>> <<extra>>"}), key("gpu", {"0"}), key("extra", {"x"})})},
      fleet, "queue.yaml"));
}

TEST(ValidateJobs, BuiltinsAreAlwaysDefined) {
  EXPECT_TRUE(
      validate_jobs({plain_entry("<<hostname>> {{ slots }}")}, test_fleet(), "queue.yaml").ok());
}

TEST(ValidateJobs, AllocationPolicyIsDefined) {
  EXPECT_TRUE(validate_jobs({entry({key("command", {"run --policy {{allocation_policy}}"}),
                                    key("allocation_policy", {"buddy"}), key("slots", {"2"})}),
                             plain_entry("<<allocation_policy>>")},
                            test_fleet(), "queue.yaml"));
}

// Blocks nested past the template limit are refused at the entry's line,
// before anything runs, as YAML nested too deeply is.
TEST(ValidateJobs, TemplateNestedTooDeeplyIsRefusedAtItsLine) {
  ConfigError error = validation_error(
      {plain_entry("ls"), entry({key("command", {deeply_nested()}), key("x", {"1"})}, 7)},
      test_fleet());
  EXPECT_EQ(error.line(), 7);
  EXPECT_TRUE(contains(error.detail(), "nested too deeply")) << error.detail();
}

TEST(ValidateJobs, ReservedKeysAreNotVariables) {
  Fleet fleet = testing::value_of(parse_hosts("- node01\n", "hosts.yaml"));
  ConfigError error = validation_error({plain_entry("echo <<command>>")}, fleet);
  EXPECT_TRUE(contains(error.detail(), "`command`")) << error.what();
}

TEST(ValidateJobs, EveryCommandValueIsChecked) {
  Fleet fleet = test_fleet();
  ConfigError error = validation_error(
      {entry({key("command", {"a <<m>>", "b <<m>>", "c <<other>>"}), key("m", {"1", "2"})}, 9)},
      fleet);
  EXPECT_EQ(error.line(), 9);
  EXPECT_TRUE(contains(error.detail(), "`other`")) << error.what();
}

TEST(ValidateJobs, ReplaceVariableIsChecked) {
  ConfigError error =
      validation_error({plain_entry("{{ replace model \"/\" \"-\" }}")}, test_fleet());
  EXPECT_TRUE(contains(error.detail(), "`model`")) << error.what();
}

TEST(ValidateJobs, LongListOfLackingHostsIsShortened) {
  std::string text = "- hostname: big\n  gpu: 0\n";
  for (int i = 0; i < 8; ++i) text += "- n" + std::to_string(i) + "\n";
  ConfigError error =
      validation_error({plain_entry("<<gpu>>")}, testing::value_of(parse_hosts(text, "h.yaml")));
  EXPECT_TRUE(contains(error.detail(), "n0, n1, n2, n3, n4 and 3 more lack it")) << error.what();
}

TEST(ValidateJobs, LargeProductEntry) {
  std::vector<std::string> a;
  std::vector<std::string> b;
  for (int i = 0; i < 200; ++i) a.push_back(std::to_string(i));
  for (int i = 0; i < 200; ++i) b.push_back("v" + std::to_string(i));
  Fleet fleet = test_fleet();
  EXPECT_TRUE(validate_jobs(
      {entry({key("command", {"x <<a>> <<b>> <<hostname>>"}), key("a", a), key("b", b)})}, fleet,
      "queue.yaml"));
  ConfigError error = validation_error(
      {entry({key("command", {"x <<a>> <<c>>"}), key("a", a), key("b", b)}, 12)}, fleet);
  EXPECT_EQ(error.line(), 12);
  EXPECT_TRUE(contains(error.detail(), "`c`")) << error.what();
}

TEST(ValidateJobs, BroadcastRejectsMultiSlotJobs) {
  Fleet fleet = test_fleet();
  ConfigError error = validation_error({entry({key("command", {"x"}), key("slots", {"2"})}, 4)},
                                       fleet, JobPlacement::broadcast);
  EXPECT_EQ(error.line(), 4);
  EXPECT_TRUE(contains(error.detail(), "broadcast")) << error.what();
}

TEST(ValidateJobs, BroadcastRejectsEveryHost) {
  ConfigError error =
      validation_error({entry({key("command", {"x"}), key("every", {"host"})}, 7)}, test_fleet(),
                       JobPlacement::broadcast);
  EXPECT_EQ(error.line(), 7);
  EXPECT_TRUE(contains(error.detail(), "remove `every`")) << error.what();
  EXPECT_TRUE(validate_jobs({entry({key("command", {"x"}), key("every", {"host"})})}, test_fleet(),
                            "queue.yaml"));
}

TEST(ValidateJobs, BroadcastNeedsTheVariableOnEverySlot) {
  Fleet fleet = test_fleet();
  EXPECT_TRUE(
      validate_jobs({plain_entry("<<hostname>>")}, fleet, "queue.yaml", JobPlacement::broadcast)
          .ok());
  ConfigError error = validation_error({plain_entry("<<gpu>>")}, fleet, JobPlacement::broadcast);
  EXPECT_TRUE(contains(error.detail(), "node03")) << error.what();
  Fleet gpus = testing::value_of(parse_hosts("- hostname: [a, b]\n  gpu: [0, 1]\n", "h.yaml"));
  EXPECT_TRUE(
      validate_jobs({plain_entry("<<gpu>>")}, gpus, "queue.yaml", JobPlacement::broadcast).ok());
}

TEST(ValidateJobs, FirstBadEntryIsReported) {
  Fleet fleet = test_fleet();
  ConfigError error = validation_error(
      {plain_entry("a", 1), plain_entry("<<x>>", 2), plain_entry("<<y>>", 3)}, fleet);
  EXPECT_EQ(error.line(), 2);
  EXPECT_TRUE(contains(error.detail(), "`x`")) << error.what();
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

// --- jobs that span hosts ----------------------------------------------------

TEST(ValidateJobs, AJobWithNodesMayUseTheMultiNodeVariables) {
  EXPECT_TRUE(validate_jobs(
      {entry({key("command", {"torchrun --node_rank=<<rank>> --nnodes=<<nnodes>> "
                              "--master_addr=<<master_addr>> --master_port=<<master_port>> "
                              "--nproc_per_node=<<slots_per_node>> <<hosts>> <<hostfile>>"}),
              key("nodes", {"3"})})},
      test_fleet(), "queue.yaml"));
}

TEST(ValidateJobs, TheMultiNodeVariablesNeedNodes) {
  ConfigError error = validation_error({plain_entry("train --rank <<rank>>", 2)}, test_fleet());
  EXPECT_EQ(error.line(), 2);
  EXPECT_TRUE(contains(error.detail(), "uses `rank`, which is not defined")) << error.what();
}

TEST(ValidateJobs, MoreNodesThanHostsWithTheSlotsIsAnError) {
  ConfigError error = validation_error(
      {entry({key("command", {"x"}), key("nodes", {"2", "3"}), key("slots", {"2"})}, 5)},
      test_fleet());
  EXPECT_EQ(error.line(), 5);
  EXPECT_EQ(error.detail(),
            "job needs 3 nodes with 2 slots each, but the hosts file has 2 such hosts");
}

TEST(ValidateJobs, NodesInBroadcastModeIsAnError) {
  ConfigError error = validation_error({entry({key("command", {"x"}), key("nodes", {"2"})}, 4)},
                                       test_fleet(), JobPlacement::broadcast);
  EXPECT_EQ(error.line(), 4);
  EXPECT_TRUE(contains(error.detail(), "remove `nodes` or use queue mode")) << error.what();
}

}  // namespace
}  // namespace runner
