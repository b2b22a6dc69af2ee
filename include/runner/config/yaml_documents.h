// Reading YAML text (hosts.yaml, queue.yaml) into its documents, with the
// parser's failures turned into errors a user can act on.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace runner {

// Every YAML document of `text`, read from the file `path`. A syntax error,
// or lists and mappings nested deeper than the parser follows, is a
// ConfigError naming the file and line, with the fix.
std::vector<YAML::Node> load_yaml_documents(const std::string& text, const std::string& path);

}  // namespace runner
