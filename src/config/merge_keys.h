// Private to config: the keys of a YAML mapping with YAML merge keys
// (`<<: *defaults`) resolved, as Python's yaml (and so Pegasus) reads them.
// yaml-cpp leaves `<<` as an ordinary key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "runner/core/result.h"

namespace runner {

// One key of a mapping and its value.
struct MappingPair {
  YAML::Node key;
  YAML::Node value;
};

// The pairs of `mapping`, with each `<<` key replaced by the pairs of the
// mapping it names (or of each mapping of the list it names, the earlier
// mapping winning). A key written in the mapping itself wins over a merged
// one and takes the merged key's place, as in Python's yaml: merged keys
// come first. A key written twice in the mapping itself stays twice, for the
// caller to report. A failure at the `<<` (Status::at) when its value is not
// a mapping or a list of mappings.
Result<std::vector<MappingPair>> merged_pairs(const YAML::Node& mapping, const std::string& path);

}  // namespace runner
