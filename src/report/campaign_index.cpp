// Reading a campaign from the journal's checkpoint and what came after it,
// and compacting the two into the next checkpoint.
#include "runner/report/campaign_index.h"

#include <unordered_map>

#include "runner/state/journal_checkpoint.h"

namespace runner {

namespace {

using nlohmann::json;

std::map<std::string, RunTally> tallies_of(const json& summary) {
  std::map<std::string, RunTally> tallies;
  if (auto runs = summary.find("runs"); runs != summary.end() && runs->is_object())
    for (const auto& [run, tally] : runs->items())
      if (std::optional<RunTally> read = tally_from_json(tally)) tallies[run] = *read;
  return tallies;
}

json summary_of(const std::map<std::string, RunTally>& tallies) {
  json runs = json::object();
  for (const auto& [run, tally] : tallies) runs[run] = tally_json(tally);
  return {{"runs", std::move(runs)}};
}

// Whether a job of `run` is done with: its records can go, its run's tally
// keeps it. `superseded`: a later attempt of it started. The last attempt's
// GPU figures (job_gpu) may still come shortly after its end while its run
// goes on (twice k_job_gpu_wait: the journal's stamps are not the
// telemetry's clock).
bool done_with(const CampaignJob& job, const CampaignRun& run, bool superseded) {
  if (!job.end || job.is_service()) return false;
  if (superseded) return true;
  if (!run.end && *job.end + 2 * k_job_gpu_wait > run.last_event) return false;
  return job.outcome == JobOutcome::succeeded && !job.rerun;
}

// A run_start without its fleet (older versions) gets the slots its jobs
// used, which the jobs compacted away can no longer tell.
void keep_slots(RunStartRecord& run_start, const CampaignRun& run) {
  if (run_start.slots) return;
  run_start.slots.emplace();
  for (const CampaignSlot& slot : run.slots)
    run_start.slots->push_back({slot.label, slot.host, slot.index, {}});
}

}  // namespace

namespace {

// Records to fold: the ones kept so far, then a part of the journal as it
// is read. Each record read is folded and dropped at once, its text kept,
// so that what is kept of it can be parsed again.
struct Folding {
  std::vector<JournalRecord> kept;
  std::string texts;                   // the texts of the records read, one after the other
  std::vector<std::size_t> text_ends;  // where each one ends in `texts`

  JournalRecord record(std::size_t index) {
    if (index < kept.size()) return std::move(kept[index]);
    index -= kept.size();
    std::size_t begin = index == 0 ? 0 : text_ends[index - 1];
    // Read once already: it is a record.
    return *read_record(std::string_view(texts).substr(begin, text_ends[index] - begin));
  }
};

// Reads the journal from `position`, a segment at most, and compacts what
// it read onto `kept` (folded on `tallies`): what still matters, the jobs
// done with summed into their runs' tallies. nullopt, with `kept` and
// `tallies` as they were, when `position` is not one of this journal; an
// error when the journal cannot be read.
Result<std::optional<JournalRead>> read_compacted(const std::string& state_dir,
                                                  const JournalPosition& position,
                                                  std::vector<JournalRecord>& kept,
                                                  std::map<std::string, RunTally>& tallies) {
  Folding folding{std::move(kept), {}, {}};
  Result<std::optional<JournalRead>> read = std::optional<JournalRead>();
  auto records = [&](const RecordFold& fold) {
    for (const JournalRecord& record : folding.kept) fold(record);
    read =
        read_journal_from(state_dir, position, {}, {}, 1, [&](json&& value, std::string_view text) {
          Result<JournalRecord> record = record_from_json(value);
          if (!record) return;
          fold(*record);
          folding.texts.append(text);
          folding.text_ends.push_back(folding.texts.size());
        });
  };
  std::vector<std::ptrdiff_t> owners;
  Campaign all = campaign_from_records(records, nullptr, tallies, &owners);
  if (!read || !*read) {
    kept = std::move(folding.kept);
    return read;
  }
  std::unordered_map<JobId, std::size_t> latest;
  for (std::size_t index = 0; index < all.jobs.size(); ++index) latest[all.jobs[index].id] = index;
  std::vector<bool> compacted(all.jobs.size());
  for (const CampaignRun& run : all.runs) {
    tallies[run.id].last_event = run.last_event;
    for (std::size_t index : run.jobs) {
      if (!done_with(all.jobs[index], run, latest[all.jobs[index].id] != index)) continue;
      compacted[index] = true;
      const CampaignJob& job = all.jobs[index];
      tally_job(tallies[run.id], job, job_end_time(job, &run, run.last_event));
    }
  }
  kept.clear();
  for (std::size_t r = 0; r < owners.size(); ++r) {
    std::ptrdiff_t owner = owners[r];
    if (owner == k_orphan_record) continue;
    if (owner >= 0 && compacted[static_cast<std::size_t>(owner)]) continue;
    JournalRecord record = folding.record(r);
    if (auto* start = std::get_if<RunStartRecord>(&record))
      if (const CampaignRun* run = all.find_run(start->run)) keep_slots(*start, *run);
    kept.push_back(std::move(record));
  }
  return read;
}

}  // namespace

Result<RecentRecords> read_recent_records(const std::string& state_dir,
                                          std::size_t checkpoint_after) {
  std::optional<JournalCheckpoint> checkpoint = load_journal_checkpoint(state_dir);
  if (!checkpoint) checkpoint.emplace();
  // A segment at a time, each compacted onto what came before, each record
  // folded as it is parsed: a long journal read without a checkpoint is
  // never all in memory at once, nor a segment's records parsed at once.
  std::vector<JournalRecord> kept = std::move(checkpoint->records);
  std::map<std::string, RunTally> tallies = tallies_of(checkpoint->summary);
  std::vector<std::string> skipped = std::move(checkpoint->skipped);
  JournalPosition position = checkpoint->position;
  std::size_t read_records = 0;
  bool unterminated_tail = false;
  for (bool from_start = position.segment == 1 && position.offset == 0;;) {
    Result<std::optional<JournalRead>> compacted =
        read_compacted(state_dir, position, kept, tallies);
    if (!compacted) return compacted.status();
    std::optional<JournalRead>& read = *compacted;
    if (!read) {
      // Not the journal the checkpoint was made of: read it from its start.
      if (from_start) return Status::error("the journal in " + state_dir + " changed while read");
      from_start = true;
      kept.clear();
      tallies.clear();
      skipped.clear();
      position = {};
      read_records = 0;
      continue;
    }
    read_records += read->record_count;
    skipped.insert(skipped.end(), read->skipped.begin(), read->skipped.end());
    position = read->end;
    unterminated_tail = read->unterminated_tail;
    if (read->whole) break;
  }

  // The last record may be one whose newline is not written yet: it is read
  // again after the checkpoint, so it cannot be in it.
  if (read_records >= checkpoint_after && !unterminated_tail)
    static_cast<void>(save_journal_checkpoint(
        state_dir, JournalCheckpoint{position, kept, summary_of(tallies), skipped}));

  return RecentRecords{std::move(kept), std::move(tallies), std::move(skipped)};
}

Result<RecentCampaign> load_recent_campaign(const std::string& state_dir, const PidAlive& alive,
                                            std::size_t checkpoint_after) {
  Result<RecentRecords> read = read_recent_records(state_dir, checkpoint_after);
  if (!read) return read.status();
  RecentCampaign recent;
  recent.campaign = campaign_from_records(read->records, alive, read->tallies);
  recent.campaign.state_dir = state_dir;
  recent.campaign.skipped_lines = std::move(read->skipped);
  recent.records = std::move(read->records);
  return recent;
}

}  // namespace runner
