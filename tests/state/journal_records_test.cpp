// The journal's records: each kind written and read back as it was, lines
// that are not records, older journals' lines, and a journal written
// before the records had types of their own, read byte for byte.
#include "runner/state/journal_records.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "runner/state/journal_replay.h"

namespace runner {
namespace {

constexpr const char* k_time = "2024-05-01T12:34:56.789Z";

// The record read back from its line, which must be one.
JournalRecord round_trip(const JournalRecord& record) {
  std::string line = journal_line(record);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  Result<JournalRecord> read = read_record(std::string_view(line).substr(0, line.size() - 1));
  EXPECT_TRUE(read.ok()) << line << ": " << read.status().message();
  return read ? *read : JournalRecord{};
}

// Every kind with every field it can hold, strings that are not UTF-8 too.
std::vector<JournalRecord> full_records() {
  RunStartRecord run{k_time,
                     "3f9a1c07",
                     4242,
                     "broadcast",
                     "/lab/hosts.yaml",
                     "/lab/caf\xe9.yaml",
                     "/lab",
                     std::vector<RunSlotRecord>{},
                     7};
  run.slots->push_back({"node01 gpu=0", "node01", 0, {{"gpu", "0"}}});
  run.slots->push_back({"node02 gpu=1", "node02", 1, {{"gpu", "1"}, {"zone", "\xff"}}});
  JobStartRecord job;
  job.time = k_time;
  job.job = 12;
  job.run = "3f9a1c07";
  job.command = "torchrun --rank=0 caf\xe9";
  job.slot = "node01 gpu=0,1";
  job.host = "node01";
  job.slot_indices = {0, 1};
  job.params = {{"batch", "4"}, {"model", "llama 7B"}};
  job.line = 9;
  job.template_command = "torchrun --rank=<<rank>>";
  job.slots_needed = 2;
  job.timeout = "1h";
  job.retries = 2;
  job.cancel = "kill <<pgid>>";
  job.metrics = {{"loss", "loss=(\\S+)"}};
  job.outputs = "results/*.csv";
  job.outputs_cleanup = true;
  job.attempt = 3;
  job.requeues = 1;
  job.service = "db";
  job.nodes = 2;
  job.tasks = {{0, "node01", "node01 gpu=0,1", {0, 1}, "torchrun --rank=0"},
               {1, "node02", "node02 gpu=1", {1}, "torchrun --rank=1"}};
  JobEndRecord end{k_time,
                   12,
                   std::nullopt,
                   "TERM",
                   "lost: \xfe",
                   true,
                   true,
                   true,
                   true,
                   std::chrono::milliseconds(98765),
                   1,
                   GpuFigures{1234.5, 246.9, 301.25, 87.5, 40960, 5.039, 2}};
  OutputsRecord outputs{
      k_time,          12, 3, 1, "/out/12/1", {{"a.txt", 12, "ab12"}, {"b\xe9", 0, ""}}, "c.txt",
      "tar: cut short"};
  JobTakenAheadRecord taken{{{{"lr", "0.1"}}, 9, "train <<lr>>", 2, "1h", 1, "kill <<lr>>",
                             {{"loss", "loss=(\\S+)"}}, "out/*", true},
                            k_time,
                            12,
                            "3f9a1c07",
                            2};
  return {run,
          job,
          taken,
          JobPgidRecord{k_time, 12, {5001, "4a3f-7"}, 1},
          end,
          JobGpuRecord{k_time, 12, 3, GpuFigures{1234.5, 246.9, 301.25, 87.5, 40960, 5.039, 2}},
          ServiceReadyRecord{k_time, 12, std::chrono::milliseconds(250), {{"port", "8080"}}},
          outputs,
          HostFailedRecord{k_time, "node02", "node02: authentication failed"},
          RunEndRecord{k_time, "3f9a1c07", "interrupted"}};
}

// Every kind with only what it must hold.
std::vector<JournalRecord> least_records() {
  JobStartRecord job;
  job.slot_indices = {0};
  return {RunStartRecord{}, job,
          JobTakenAheadRecord{}, JobPgidRecord{},
          JobEndRecord{},   JobGpuRecord{},
          ServiceReadyRecord{}, OutputsRecord{},
          HostFailedRecord{}, RunEndRecord{}};
}

TEST(JournalRecords, EveryKindReadsBackAsItWasWritten) {
  for (const std::vector<JournalRecord>& records : {full_records(), least_records()}) {
    std::set<std::string_view> kinds;
    for (const JournalRecord& record : records) {
      EXPECT_EQ(round_trip(record), record) << journal_line(record);
      kinds.insert(event_name(record));
    }
    EXPECT_EQ(kinds.size(), std::variant_size_v<JournalRecord>);
  }
}

TEST(JournalRecords, EachLineBeginsWithItsEventAndTime) {
  for (const JournalRecord& record : full_records()) {
    std::string begin =
        "{\"event\":\"" + std::string(event_name(record)) + "\",\"time\":\"" + k_time + "\",";
    EXPECT_EQ(journal_line(record).substr(0, begin.size()), begin);
  }
}

TEST(JournalRecords, WhatIsNotSetIsLeftOutOrNull) {
  EXPECT_EQ(journal_line(JobEndRecord{k_time, 3, 0}),
            std::string(R"({"event":"job_end","time":")") + k_time +
                R"(","job":3,"exit":0,"signal":null,"error":null,"lost":false,)"
                R"("timed_out":false,"cancelled":false,"rerun":false,"duration_ms":0})"
                "\n");
  EXPECT_EQ(journal_line(JobPgidRecord{k_time, 3, {77, ""}}),
            std::string(R"({"event":"job_pgid","time":")") + k_time +
                R"(","job":3,"pgid":77})"
                "\n");
  EXPECT_EQ(journal_line(RunStartRecord{k_time, "r", 1, "queue", "h", "q"}),
            std::string(R"({"event":"run_start","time":")") + k_time +
                R"(","run":"r","pid":1,"mode":"queue","hosts_file":"h","queue_file":"q"})"
                "\n");
}

TEST(JournalRecords, AJobsOutputsFollowItsMetricsAndItsGpuFiguresEndItsEnd) {
  JobStartRecord start;
  start.time = k_time;
  start.job = 3;
  start.slot_indices = {0};
  start.metrics = {{"loss", "loss=\\S+"}};
  start.outputs = "results/*.csv";
  start.outputs_cleanup = true;
  EXPECT_EQ(
      journal_line(start),
      std::string(R"({"event":"job_start","time":")") + k_time +
          R"(","job":3,"run":"","command":"","slot":"","host":"","slot_index":0,)"
          R"("params":{},"line":0,"template":"","slots_needed":1,"metrics":{"loss":"loss=\\S+"},)"
          R"("outputs":"results/*.csv","outputs_cleanup":true,"attempt":1,"requeues":0})"
          "\n");
  JobEndRecord end{k_time, 3, 0};
  end.gpu = GpuFigures{1234.5, 246.9, 301.25, 87.5, 40960, 5.039, 2};
  EXPECT_EQ(journal_line(end),
            std::string(R"({"event":"job_end","time":")") + k_time +
                R"(","job":3,"exit":0,"signal":null,"error":null,"lost":false,)"
                R"("timed_out":false,"cancelled":false,"rerun":false,"duration_ms":0,)"
                R"("gpu":{"energy_j":1234.5,"power_mean_w":246.9,"power_max_w":301.25,)"
                R"("util_mean":87.5,"memory_max_mib":40960.0,"seconds":5.039,"gpus":2}})"
                "\n");
}

TEST(JournalRecords, GpuFiguresThatAreNotWholeReadAsNone) {
  Result<JournalRecord> end =
      read_record(R"({"event":"job_end","job":3,"gpu":{"energy_j":"many"}})");
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(std::get<JobEndRecord>(*end).gpu, std::nullopt);
}

TEST(JournalRecords, BytesThatAreNotUtf8AreWrittenAsHex) {
  HostFailedRecord failed{k_time, "caf\xe9", "ok"};
  EXPECT_NE(journal_line(failed).find(R"("host":{"hex":"636166e9"})"), std::string::npos);
  EXPECT_EQ(std::get<HostFailedRecord>(round_trip(failed)).host, "caf\xe9");
}

TEST(JournalRecords, SaysWhichJobARecordIsAbout) {
  for (const JournalRecord& record : full_records()) {
    bool about_a_job = !std::holds_alternative<RunStartRecord>(record) &&
                       !std::holds_alternative<RunEndRecord>(record) &&
                       !std::holds_alternative<HostFailedRecord>(record);
    EXPECT_EQ(record_job(record), about_a_job ? std::optional<JobId>(12) : std::nullopt)
        << event_name(record);
  }
}

TEST(JournalRecords, ALineThatIsNotARecordIsAnError) {
  for (const char* line : {"", "not json", R"({"event":"job_end","time":"2024-05-01T1)", "[1,2]",
                           "null", "17", R"("job_end")", R"({"job":1})", R"({"event":7,"job":1})",
                           R"({"event":null})", R"({"event":"job_end"}{"event":"job_end"})",
                           R"({"event":"job_ended","job":1})", R"({"event":"JOB_END"})"}) {
    Result<JournalRecord> read = read_record(line);
    EXPECT_FALSE(read.ok()) << line;
    if (!read) {
      EXPECT_NE(read.status().message().find("not a journal record"), std::string::npos);
    }
  }
  EXPECT_NE(read_record(R"({"event":"job_ended"})").status().message().find("'job_ended'"),
            std::string::npos);
}

TEST(JournalRecords, AFieldOfAnotherTypeReadsAsItsDefault) {
  Result<JournalRecord> end =
      read_record(R"({"event":"job_end","job":"7","exit":"3","signal":5,"lost":1,"rerun":"yes",)"
                  R"("duration_ms":"long","failed_rank":1.5})");
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(std::get<JobEndRecord>(*end), JobEndRecord{});
  Result<JournalRecord> start = read_record(
      R"({"event":"job_start","job":2,"params":[1],"slot_indices":"0","tasks":{"rank":1},)"
      R"("attempt":null,"slots_needed":"2","retries":null,"nodes":"two"})");
  ASSERT_TRUE(start.ok());
  const auto& job = std::get<JobStartRecord>(*start);
  EXPECT_EQ(job.job, 2u);
  EXPECT_TRUE(job.params.empty());
  EXPECT_EQ(job.slot_indices, std::vector<int>{0});
  EXPECT_TRUE(job.tasks.empty());
  EXPECT_EQ(job.attempt, 1);
  EXPECT_EQ(job.slots_needed, 1);
  EXPECT_EQ(job.retries, 0);
  EXPECT_EQ(job.nodes, 1);
}

TEST(JournalRecords, ARecordReadFromAnOddLineIsWrittenBackAsTheSameRecord) {
  for (const char* line :
       {R"({"event":"job_start","tasks":[{"rank":1}],"slot_indices":[2.5,"x",3]})",
        R"({"event":"job_start","nodes":null,"tasks":[7,{"rank":1,"slot_index":4}]})",
        R"({"event":"run_start","time":{"hex":"ff"},"mode":{"hex":"fe"},"slots":[1,{}]})",
        R"({"event":"job_end","exit":4294967297,"duration_ms":-3,"failed_rank":-1})",
        R"({"event":"outputs","files":[{"size":1e3},{"sha256":{"hex":"c3"}}],"rank":"r"})",
        R"({"event":"job_pgid","mark":{"hex":"00"},"pgid":-1,"job":-2})"}) {
    Result<JournalRecord> read = read_record(line);
    ASSERT_TRUE(read.ok()) << line;
    EXPECT_EQ(round_trip(*read), *read) << line << "\n" << journal_line(*read);
  }
}

TEST(JournalRecords, TasksAreReadOnlyForAJobOfNodes) {
  Result<JournalRecord> start =
      read_record(R"({"event":"job_start","tasks":[{"rank":0,"host":"a"}]})");
  ASSERT_TRUE(start.ok());
  EXPECT_TRUE(std::get<JobStartRecord>(*start).tasks.empty());
}

TEST(JournalRecords, ParametersThatAreNotTextReadAsTheirJson) {
  Result<JournalRecord> start =
      read_record(R"({"event":"job_start","params":{"b":4,"a":true,"c":{"hex":"ff"}}})");
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(std::get<JobStartRecord>(*start).params,
            (Params{{"a", "true"}, {"b", "4"}, {"c", "\xff"}}));
}

TEST(JournalRecords, OlderJournalsLinesRead) {
  // Before the template, the fleet and the marks were recorded.
  Result<JournalRecord> start = read_record(
      R"({"event":"job_start","time":"t","job":4,"run":"r","command":"echo 4","slot_index":2})");
  ASSERT_TRUE(start.ok());
  const auto& job = std::get<JobStartRecord>(*start);
  EXPECT_EQ(job.template_command, "echo 4");
  EXPECT_EQ(job.slot_indices, std::vector<int>{2});
  EXPECT_FALSE(job.nodes);
  Result<JournalRecord> run = read_record(R"({"event":"run_start","run":"r","pid":9})");
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(std::get<RunStartRecord>(*run).slots);
  EXPECT_FALSE(std::get<RunStartRecord>(*run).cwd);
  Result<JournalRecord> pgid = read_record(R"({"event":"job_pgid","job":4,"pgid":300})");
  ASSERT_TRUE(pgid.ok());
  EXPECT_EQ(std::get<JobPgidRecord>(*pgid).group, ProcessGroup{300});
}

TEST(JournalRecords, RecordFromJsonReadsWhatReadRecordReads) {
  for (const JournalRecord& record : full_records()) {
    std::string line = journal_line(record);
    Result<JournalRecord> read = record_from_json(nlohmann::json::parse(line));
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(*read, record);
  }
  EXPECT_FALSE(record_from_json(nlohmann::json::array()).ok());
}

// A journal written by the writer before its records had types: each line
// is read, and written again, byte for byte.
TEST(JournalRecords, AJournalWrittenBeforeReadsAndWritesTheSameBytes) {
  std::ifstream file(
      std::string(RUNNER_SOURCE_DIR) + "/tests/state/data/journal_of_every_record.jsonl",
      std::ios::binary);
  ASSERT_TRUE(file);
  std::vector<JournalRecord> records;
  std::set<std::string_view> kinds;
  for (std::string line; std::getline(file, line);) {
    Result<JournalRecord> read = read_record(line);
    ASSERT_TRUE(read.ok()) << line;
    EXPECT_EQ(journal_line(*read), line + "\n");
    kinds.insert(event_name(*read));
    records.push_back(std::move(*read));
  }
  EXPECT_EQ(kinds.size(), std::variant_size_v<JournalRecord>);
  JournalReplay replay = replay_journal(records);
  EXPECT_TRUE(replay.open_runs.empty());
  // Its run ended interrupted, with job #2 lost and waiting to run again,
  // and job #4 taken ahead of need and never started.
  ASSERT_EQ(replay.unfinished.size(), 2u);
  EXPECT_EQ(replay.unfinished[0].id, 2u);
  EXPECT_FALSE(replay.unfinished[0].running);
  EXPECT_EQ(replay.unfinished[0].start.nodes, 2);
  EXPECT_EQ(replay.unfinished[0].start.command, "torchrun --rank=0 caf\xe9");
  EXPECT_EQ(replay.unfinished[1].id, 4u);
  EXPECT_FALSE(replay.unfinished[1].running);
  EXPECT_EQ(replay.unfinished[1].start.template_command, "echo <<i>>");
  // Lines of fields added since: a job's outputs and its GPUs' figures.
  auto job_3 = [](const JournalRecord& record) { return record_job(record) == JobId{3}; };
  auto start = std::find_if(records.begin(), records.end(), job_3);
  ASSERT_NE(start, records.end());
  EXPECT_EQ(std::get<JobStartRecord>(*start).outputs, "results/*.csv");
  EXPECT_TRUE(std::get<JobStartRecord>(*start).outputs_cleanup);
  auto end = std::find_if(std::next(start), records.end(), job_3);
  ASSERT_NE(end, records.end());
  ASSERT_TRUE(std::get<JobEndRecord>(*end).gpu);
  EXPECT_EQ(std::get<JobEndRecord>(*end).gpu->memory_max_mib, 40960);
  EXPECT_EQ(std::get<JobEndRecord>(*end).gpu->gpus, 2);
}

}  // namespace
}  // namespace runner
