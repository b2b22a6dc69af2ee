// YAML text read into documents, with clear errors (see yaml_documents.h).
#include "runner/config/yaml_documents.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include "runner/config/config_error.h"

namespace runner {

namespace {

int line_of(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 0; }
int column_of(const YAML::Mark& mark) { return mark.column >= 0 ? mark.column + 1 : 0; }

}  // namespace

std::vector<YAML::Node> load_yaml_documents(const std::string& text, const std::string& path) {
  try {
    return YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& error) {
    // The parser counts a level per list and mapping; the one that would
    // make `depth()` is refused.
    throw ConfigError(
        path, line_of(error.mark), column_of(error.mark),
        fmt::format("lists and mappings are nested too deeply here (more than {} levels); an "
                    "entry needs at most three (the file's list, the entry's mapping, a list of "
                    "values): remove the extra nesting",
                    error.depth() - 1));
  } catch (const YAML::Exception& error) {
    throw ConfigError(path, line_of(error.mark), column_of(error.mark),
                      fmt::format("not valid YAML: {}; fix the syntax here", error.msg));
  }
}

}  // namespace runner
