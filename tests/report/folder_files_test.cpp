// The regular files under a folder, as a job's collected outputs are read:
// the same files, in the same order, as std::filesystem's recursive walk
// gives, links treated as it treats them.
#include "runner/report/folder_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace runner {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// What the recursive walk of the standard library finds, in path order.
std::vector<fs::path> walked(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error))
    if (it->is_regular_file(error)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RegularFilesUnder, ListsNestedFilesInPathOrderAsTheRecursiveWalkDoes) {
  TempDir dir;
  dir.write("out/b.json", "{}");
  dir.write("out/a-b.csv", "x\n1\n");
  dir.write("out/a/z.tsv", "x\n1\n");
  dir.write("out/a/deeper/y.json", "{}");
  dir.write("elsewhere/target.json", "{}");
  fs::create_directory(dir.file("out/empty"));
  // A link to a file counts as the file; one to a folder is not followed;
  // a dangling one and a FIFO are not files.
  fs::create_symlink(dir.file("elsewhere/target.json"), dir.file("out/linked.json"));
  fs::create_directory_symlink(dir.file("elsewhere"), dir.file("out/linked-folder"));
  fs::create_symlink(dir.file("nowhere"), dir.file("out/dangling.json"));
  ASSERT_EQ(::mkfifo(dir.file("out/fifo.json").c_str(), 0600), 0);

  std::optional<FolderFiles> files = regular_files_under(dir.file("out"));
  ASSERT_TRUE(files);
  std::vector<fs::path> expected = {dir.file("out/a/deeper/y.json"), dir.file("out/a/z.tsv"),
                                    dir.file("out/a-b.csv"), dir.file("out/b.json"),
                                    dir.file("out/linked.json")};
  EXPECT_EQ(files->files, expected);
  EXPECT_FALSE(files->cut_short);
  EXPECT_EQ(files->files, walked(dir.file("out")));
}

TEST(RegularFilesUnder, AFolderThatIsALinkIsListedThroughIt) {
  TempDir dir;
  dir.write("real/r.json", "{}");
  fs::create_directory_symlink(dir.file("real"), dir.file("link"));
  std::optional<FolderFiles> files = regular_files_under(dir.file("link"));
  ASSERT_TRUE(files);
  EXPECT_EQ(files->files, std::vector<fs::path>{dir.file("link/r.json")});
}

TEST(RegularFilesUnder, NothingWhenThereIsNoFolderButAnEmptyListForAnEmptyOne) {
  TempDir dir;
  dir.write("file.json", "{}");
  fs::create_directory(dir.file("empty"));
  EXPECT_FALSE(regular_files_under(dir.file("missing")));
  EXPECT_FALSE(regular_files_under(dir.file("file.json")));
  std::optional<FolderFiles> empty = regular_files_under(dir.file("empty"));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->files.empty());
}

TEST(RegularFilesUnder, AFolderDeeperThanTheBoundIsNotListed) {
  // A tree a job (or whoever else writes there) made deeper than any output
  // needs: listed to the bound, not to the end of the stack or descriptors.
  TempDir dir;
  std::string deep = "out";
  for (int level = 0; level < k_folder_files_depth + 5; ++level) {
    deep += "/d";
    if (level == k_folder_files_depth - 2) dir.write(deep + "/shallow.json", "{}");
  }
  dir.write(deep + "/too-deep.json", "{}");
  fs::path folder = dir.file("out");
  std::optional<FolderFiles> files = regular_files_under(folder);
  ASSERT_TRUE(files.has_value());
  ASSERT_EQ(files->files.size(), 1u);
  EXPECT_EQ(files->files.front().filename(), "shallow.json");
}

TEST(RegularFilesUnder, NoMoreEntriesThanTheBoundAreLookedAtAndTheListSaysItIsCutShort) {
  // A folder a job (or whoever else writes there) filled with more entries
  // than any output holds: listed to the bound, not held whole.
  TempDir dir;
  for (int i = 0; i < 30; ++i) dir.write("out/f" + std::to_string(i) + ".json", "{}");
  dir.write("out/sub/g.json", "{}");
  std::optional<FolderFiles> cut = regular_files_under(dir.file("out"), 10);
  ASSERT_TRUE(cut.has_value());
  EXPECT_TRUE(cut->cut_short);
  EXPECT_LE(cut->files.size(), 10u);
  EXPECT_GE(cut->files.size(), 9u);  // the subfolder may be among the first ten
  std::optional<FolderFiles> whole = regular_files_under(dir.file("out"), 32);
  ASSERT_TRUE(whole.has_value());
  EXPECT_FALSE(whole->cut_short);
  EXPECT_EQ(whole->files.size(), 31u);
}

}  // namespace
}  // namespace runner
