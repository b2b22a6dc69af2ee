// A journal with gang jobs, written as the runner writes it (one JSON
// record a line), for the report area's tests: two hosts of two slots;
// #1 a gang job on both hosts that failed by rank 1, #2 an ordinary job,
// #3 a gang job still running, ranks on one slot of each host.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runner/state/journal_records.h"

namespace runner::testing {

inline constexpr std::string_view k_gang_journal =
    R"({"event":"run_start","time":"2024-05-01T10:00:00.000Z","run":"r1","pid":77,"mode":"queue","hosts_file":"hosts.yaml","queue_file":"queue.yaml","cwd":"/campaign","slots":[{"label":"node01 gpu=0","host":"node01","index":0,"params":{"gpu":"0"}},{"label":"node01 gpu=1","host":"node01","index":1,"params":{"gpu":"1"}},{"label":"node02 gpu=0","host":"node02","index":0,"params":{"gpu":"0"}},{"label":"node02 gpu=1","host":"node02","index":1,"params":{"gpu":"1"}}],"queued":3}
{"event":"job_start","time":"2024-05-01T10:00:01.000Z","job":1,"run":"r1","command":"torchrun --node_rank=0 train.py","slot":"node01 gpu=0,1","host":"node01","slot_index":0,"slot_indices":[0,1],"params":{"model":"gpt"},"line":1,"template":"torchrun --node_rank=<<rank>> train.py","slots_needed":2,"attempt":1,"requeues":0,"nodes":2,"tasks":[{"rank":0,"host":"node01","slot":"node01 gpu=0,1","slot_indices":[0,1],"command":"torchrun --node_rank=0 train.py"},{"rank":1,"host":"node02","slot":"node02 gpu=0,1","slot_indices":[0,1],"command":"torchrun --node_rank=1 train.py"}]}
{"event":"job_pgid","time":"2024-05-01T10:00:01.100Z","job":1,"pgid":4100}
{"event":"job_pgid","time":"2024-05-01T10:00:01.300Z","job":1,"pgid":4200,"rank":1}
{"event":"job_end","time":"2024-05-01T10:00:31.100Z","job":1,"exit":1,"signal":null,"error":null,"lost":false,"timed_out":false,"cancelled":false,"rerun":false,"duration_ms":30000,"failed_rank":1}
{"event":"job_start","time":"2024-05-01T10:00:32.000Z","job":2,"run":"r1","command":"echo plain","slot":"node01 gpu=0","host":"node01","slot_index":0,"params":{},"line":5,"template":"echo plain","slots_needed":1,"attempt":1,"requeues":0}
{"event":"job_pgid","time":"2024-05-01T10:00:32.000Z","job":2,"pgid":4300}
{"event":"job_end","time":"2024-05-01T10:00:42.000Z","job":2,"exit":0,"signal":null,"error":null,"lost":false,"timed_out":false,"cancelled":false,"rerun":false,"duration_ms":10000}
{"event":"job_start","time":"2024-05-01T10:00:40.000Z","job":3,"run":"r1","command":"mpirun --hostfile /tmp/h train.py","slot":"node02 gpu=0","host":"node02","slot_index":0,"params":{},"line":8,"template":"if [ <<rank>> = 0 ]; then mpirun --hostfile <<hostfile>> train.py; fi","slots_needed":1,"attempt":1,"requeues":0,"nodes":2,"tasks":[{"rank":0,"host":"node02","slot":"node02 gpu=0","slot_indices":[0],"command":"mpirun --hostfile /tmp/h train.py"},{"rank":1,"host":"node01","slot":"node01 gpu=1","slot_indices":[1],"command":"true"}]}
{"event":"job_pgid","time":"2024-05-01T10:00:40.000Z","job":3,"pgid":4400}
{"event":"job_pgid","time":"2024-05-01T10:00:40.500Z","job":3,"pgid":4500,"rank":1}
)";

// The records of a journal's text, each line read by read_record.
inline std::vector<JournalRecord> journal_records(std::string_view text) {
  std::vector<JournalRecord> records;
  for (std::size_t eol; (eol = text.find('\n')) != std::string_view::npos;
       text.remove_prefix(eol + 1)) {
    Result<JournalRecord> record = read_record(text.substr(0, eol));
    if (record) records.push_back(std::move(*record));
  }
  return records;
}

}  // namespace runner::testing
