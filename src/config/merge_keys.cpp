// YAML merge keys resolved (see merge_keys.h).
#include "merge_keys.h"

#include <fmt/format.h>

#include <algorithm>

namespace runner {

namespace {

// Merges that merge mappings that merge...: deeper than this is a mistake.
constexpr int k_max_merge_depth = 64;
// Keys that one mapping's merges may visit: `<<: [*a, *a]` at each of a few
// dozen levels would otherwise visit billions, from a few lines.
constexpr std::size_t k_max_merged_keys = 100000;

// One mapping's merges as they are resolved: where to report, and the keys
// visited so far.
struct MergeWalk {
  const std::string& path;
  const YAML::Node& mapping;
  std::size_t keys_visited = 0;
};

bool is_merge_key(const YAML::Node& key) {
  return key.IsScalar() && key.Scalar() == "<<" &&
         (key.Tag() == "?" || key.Tag() == "tag:yaml.org,2002:merge");
}

Status failure_at(const std::string& path, const YAML::Node& node, const std::string& message) {
  const YAML::Mark& mark = node.Mark();
  return Status::at(path, mark.line >= 0 ? mark.line + 1 : 0,
                    mark.column >= 0 ? mark.column + 1 : 0, message);
}

Result<std::vector<MappingPair>> merged_pairs_at(const YAML::Node& mapping, MergeWalk& walk,
                                                 int depth);

// The pairs that the `<<` key `key` with value `value` brings in, in
// Python's order: the mappings of a list last to first, so that with
// later-wins the earlier mapping wins.
Result<std::vector<MappingPair>> pairs_to_merge(const YAML::Node& key, const YAML::Node& value,
                                                MergeWalk& walk, int depth) {
  const std::string& path = walk.path;
  const std::string fix =
      "a merge key takes an alias of a mapping, like `<<: *defaults`, or a list of them, like "
      "`<<: [*defaults, *gpu]`";
  if (depth >= k_max_merge_depth)
    return failure_at(
        path, key,
        fmt::format("merge keys (`<<`) nest more than {} deep here; merge fewer levels",
                    k_max_merge_depth));
  if (value.IsMap()) return merged_pairs_at(value, walk, depth + 1);
  if (!value.IsSequence()) return failure_at(path, key, "`<<` does not name a mapping; " + fix);
  std::vector<MappingPair> pairs;
  for (std::size_t i = value.size(); i-- > 0;) {
    if (!value[i].IsMap())
      return failure_at(path, key, "`<<` lists something that is not a mapping; " + fix);
    Result<std::vector<MappingPair>> more = merged_pairs_at(value[i], walk, depth + 1);
    if (!more) return more;
    pairs.insert(pairs.end(), more->begin(), more->end());
  }
  return pairs;
}

// Where a merged key named `name` already is in `pairs`, or -1.
std::ptrdiff_t find_merged(const std::vector<MappingPair>& pairs, std::size_t merged_count,
                           const YAML::Node& key) {
  if (!key.IsScalar()) return -1;
  for (std::size_t i = 0; i < merged_count; ++i)
    if (pairs[i].key.IsScalar() && pairs[i].key.Scalar() == key.Scalar())
      return static_cast<std::ptrdiff_t>(i);
  return -1;
}

Result<std::vector<MappingPair>> merged_pairs_at(const YAML::Node& mapping, MergeWalk& walk,
                                                 int depth) {
  walk.keys_visited += mapping.size();
  if (walk.keys_visited > k_max_merged_keys)
    return failure_at(
        walk.path, walk.mapping,
        fmt::format("merge keys (`<<`) bring more than {} keys into this mapping (a mapping "
                    "merged again and again); merge each mapping once",
                    k_max_merged_keys));
  std::vector<MappingPair> merged;
  std::vector<MappingPair> own;
  for (auto it = mapping.begin(); it != mapping.end(); ++it) {
    if (is_merge_key(it->first)) {
      Result<std::vector<MappingPair>> more = pairs_to_merge(it->first, it->second, walk, depth);
      if (!more) return more;
      merged.insert(merged.end(), more->begin(), more->end());
    } else {
      own.push_back(MappingPair{it->first, it->second});
    }
  }
  // Merged keys once each, where first merged, with the last value merged.
  std::vector<MappingPair> pairs;
  for (const MappingPair& pair : merged) {
    std::ptrdiff_t at = find_merged(pairs, pairs.size(), pair.key);
    if (at < 0)
      pairs.push_back(pair);
    else
      pairs[static_cast<std::size_t>(at)] = pair;
  }
  // The mapping's own keys win, in the merged key's place.
  std::size_t merged_count = pairs.size();
  std::vector<bool> replaced(merged_count, false);
  for (const MappingPair& pair : own) {
    std::ptrdiff_t at = find_merged(pairs, merged_count, pair.key);
    if (at >= 0 && !replaced[static_cast<std::size_t>(at)]) {
      pairs[static_cast<std::size_t>(at)] = pair;
      replaced[static_cast<std::size_t>(at)] = true;
    } else {
      pairs.push_back(pair);
    }
  }
  return pairs;
}

}  // namespace

Result<std::vector<MappingPair>> merged_pairs(const YAML::Node& mapping, const std::string& path) {
  MergeWalk walk{path, mapping};
  return merged_pairs_at(mapping, walk, 0);
}

}  // namespace runner
