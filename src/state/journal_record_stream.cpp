// Reading the journal on a thread of its own (see journal_record_stream.h).
#include "runner/state/journal_record_stream.h"

#include <exception>
#include <thread>
#include <vector>

#include "runner/core/handoff.h"

namespace runner {

namespace {

// Records are handed over this many at a time, at most this many batches
// waiting.
constexpr std::size_t k_batch_records = 1024;
constexpr std::size_t k_batches_ahead = 8;

// Stops the handoff's taking when it goes out of scope.
struct StopTaking {
  Handoff<std::vector<JournalRecord>>& batches;
  ~StopTaking() { batches.stop(); }
};

}  // namespace

Result<std::optional<JournalRead>> fold_journal_records(
    const std::string& state_dir, const std::function<void(const JournalRecord&)>& fold) {
  Result<std::optional<JournalRead>> read = std::optional<JournalRead>();
  std::exception_ptr reading_failed;
  Handoff<std::vector<JournalRecord>> batches(k_batches_ahead);
  std::jthread reader([&] {
    try {
      std::vector<JournalRecord> batch;
      read = read_journal_from(state_dir, {}, {}, {}, SIZE_MAX,
                               [&](nlohmann::json&& value, std::string_view) {
                                 Result<JournalRecord> record = record_from_json(value);
                                 if (!record) return;
                                 batch.push_back(std::move(*record));
                                 if (batch.size() == k_batch_records)
                                   batches.give(std::exchange(batch, {}));
                               });
      if (!batch.empty()) batches.give(std::move(batch));
    } catch (...) {
      reading_failed = std::current_exception();
    }
    batches.close();
  });
  {
    // Should `fold` throw, the reader is not left waiting for room.
    StopTaking stop_taking{batches};
    while (std::optional<std::vector<JournalRecord>> batch = batches.take())
      for (const JournalRecord& record : *batch) fold(record);
  }
  reader.join();
  if (reading_failed) std::rethrow_exception(reading_failed);
  return read;
}

}  // namespace runner
