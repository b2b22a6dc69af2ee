// Reading YAML text (hosts.yaml, queue.yaml) into its documents, with the
// parser's failures turned into errors a user can act on.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "runner/core/result.h"

namespace runner {

// Every YAML document of `text`, read from the file `path`. A syntax error,
// or lists and mappings nested deeper than the parser follows, is a
// failure naming the file and line (Status::at), with the fix.
Result<std::vector<YAML::Node>> load_yaml_documents(const std::string& text,
                                                    const std::string& path);

}  // namespace runner
