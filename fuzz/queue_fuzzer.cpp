// queue.yaml: parse_queue_document on any text, each entry's jobs
// (expanded when there are few, else the first), their canonical entries
// written back, and the file's text after its first job is taken and with
// an entry appended. A failure is the answer to a bad file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "runner/config/queue_entry.h"
#include "runner/queue/queue_document.h"

namespace {

// More jobs than this are not expanded: a product of many keys is the
// size of its lists' product, not a bug.
constexpr std::size_t k_most_jobs = 64;

void write_back(const runner::JobSpec& job) { runner::entry_to_yaml(runner::canonical_entry(job)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  runner::Result<runner::QueueDocument> parsed = runner::parse_queue_document(
      std::string(reinterpret_cast<const char*>(data), size), "queue.yaml");
  if (!parsed) return 0;
  const runner::QueueDocument& doc = *parsed;
  for (const runner::EntrySpan& span : doc.entries) {
    runner::entry_to_yaml(span.entry, span.indent);
    if (runner::job_count(span.entry) <= k_most_jobs)
      runner::for_each_job(span.entry, write_back);
    else
      write_back(runner::first_job(span.entry));
    for (const runner::QueueEntry& rest : runner::remainder_after_first(span.entry))
      runner::entry_to_yaml(rest);
  }
  runner::peek_first_job(doc);
  if (doc.entries.empty()) return 0;
  runner::text_without_first_job(doc);
  runner::Result<runner::QueueDocument> added =
      runner::parse_queue_document(runner::entry_to_yaml(doc.entries.front().entry), "jobs to add");
  if (added) runner::text_with_appended(doc, *added);
  return 0;
}
