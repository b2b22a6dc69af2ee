#include "runner/exec/push_plan.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

PushFile file(std::string path, std::uint64_t size, std::int64_t mtime, unsigned mode) {
  return PushFile{"/here", std::move(path), size, mtime, mode};
}

TEST(PushPlan, ListingRecordsGiveSizeTimeAndModeByPath) {
  using namespace std::string_literals;
  auto there = parse_host_listing(
      "12 1700000000 644 ./data/a.txt\0"
      "0 1700000001 4755 ./data/with space\0"
      "3 1700000002 600 ./data/new\nline\\and\ttab\0"
      "garbage record\0"
      "5 17 999 ./bad-mode\0"
      "7 8 600 no-dot-slash\0"
      "9 9 644 ./last-without-nul"s);
  ASSERT_EQ(there.size(), 4u);
  EXPECT_EQ(there.at("data/a.txt"), (HostFile{12, 1700000000, 0644}));
  EXPECT_EQ(there.at("data/with space"), (HostFile{0, 1700000001, 04755}));
  EXPECT_EQ(there.at("data/new\nline\\and\ttab"), (HostFile{3, 1700000002, 0600}));
  EXPECT_EQ(there.at("last-without-nul"), (HostFile{9, 9, 0644}));
}

TEST(PushPlan, SendsWhatIsMissingOrDiffersInSizeTimeOrMode) {
  std::vector<PushFile> files = {file("d/same", 3, 100, 0644), file("d/size", 3, 100, 0644),
                                 file("d/time", 3, 100, 0644), file("d/mode", 3, 100, 0755),
                                 file("d/new", 3, 100, 0644)};
  std::map<std::string, HostFile> there = {{"d/same", {3, 100, 0644}},
                                           {"d/size", {4, 100, 0644}},
                                           {"d/time", {3, 99, 0644}},
                                           {"d/mode", {3, 100, 0644}},
                                           {"d/other", {1, 1, 0644}}};
  std::vector<std::string> sent;
  for (const PushFile& f : files_to_send(files, there)) sent.push_back(f.path);
  EXPECT_EQ(sent, (std::vector<std::string>{"d/size", "d/time", "d/mode", "d/new"}));
}

TEST(PushPlan, TheListingLooksOnlyBelowTheTopNamesOfTheFiles) {
  std::string command = host_listing_command(
      "my dir", {file("data/a", 1, 1, 0644), file("data/b/c", 1, 1, 0644), file("x'y", 1, 1, 0644)});
  EXPECT_EQ(command,
            "cd 'my dir' 2>/dev/null || exit 0; find './data' './x'\\''y' -type f -exec stat "
            "--printf '%s %Y %a %n\\0' {} + 2>/dev/null; true");
  EXPECT_EQ(host_listing_command("d", {}), "true");
}

TEST(PushPlan, UnpackingMakesTheFolderAndKeepsModes) {
  EXPECT_EQ(unpack_command("a b"), "mkdir -p -- 'a b' && exec tar -xpf - -C 'a b'");
}

}  // namespace
}  // namespace runner
