// The keys the section-5 man pages document under RESERVED KEYS are exactly
// the keys the parsers give a meaning of their own: a key added to a parser
// and not to its page, or documented and not parsed, fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "runner/config/hosts.h"
#include "runner/config/queue_entry.h"

namespace runner {
namespace {

// The terms of the page's RESERVED KEYS section: lines that are one bold
// word, as scdoc writes a definition's term (`*hostname*`).
std::set<std::string> documented_keys(const std::string& page) {
  std::ifstream file(std::string(RUNNER_SOURCE_DIR) + "/docs/man/" + page);
  EXPECT_TRUE(file) << "cannot read docs/man/" << page;
  std::set<std::string> keys;
  std::string line;
  bool in_section = false;
  const std::regex term(R"(^\*([a-z_]+)\*$)");
  while (std::getline(file, line)) {
    if (line.rfind("# ", 0) == 0) in_section = line == "# RESERVED KEYS";
    std::smatch match;
    if (in_section && std::regex_match(line, match, term)) keys.insert(match[1]);
  }
  return keys;
}

template <typename Keys>
std::set<std::string> as_set(const Keys& keys) {
  return std::set<std::string>(keys.begin(), keys.end());
}

TEST(ManPageKeys, HostsPageDocumentsEveryReservedHostKeyAndNoOther) {
  EXPECT_EQ(documented_keys("runner-hosts.yaml.5.scd"), as_set(reserved_host_keys()));
}

TEST(ManPageKeys, QueuePageDocumentsEveryReservedJobKeyAndNoOther) {
  EXPECT_EQ(documented_keys("runner-queue.yaml.5.scd"), as_set(reserved_job_keys()));
}

TEST(ManPageKeys, EveryListedJobKeyIsReserved) {
  for (std::string_view key : reserved_job_keys())
    EXPECT_TRUE(is_reserved_job_key(std::string(key))) << key;
  EXPECT_FALSE(is_reserved_job_key("model"));
}

}  // namespace
}  // namespace runner
