// The tar streams a hostile host could send, made with libarchive's
// writer, unpacked into a real folder: what lands there, what is recorded,
// and what is refused.
#include "runner/exec/output_unpacker.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

namespace fs = std::filesystem;

// One member of a stream: a file (with content), a folder, a symbolic or
// hard link (to `link`), or a FIFO.
struct Member {
  std::string name;
  unsigned type = AE_IFREG;
  unsigned mode = 0644;
  std::string content;
  std::string link;
};

la_ssize_t append_to(archive*, void* out, const void* bytes, size_t size) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(bytes), size);
  return static_cast<la_ssize_t>(size);
}

// The members as one tar stream in GNU tar's format (the host's tar), or
// pax's.
std::string tar_of(const std::vector<Member>& members, bool pax = false) {
  std::string out;
  archive* writer = archive_write_new();
  pax ? archive_write_set_format_pax(writer) : archive_write_set_format_gnutar(writer);
  archive_write_set_bytes_in_last_block(writer, 1);
  archive_write_open(writer, &out, nullptr, &append_to, nullptr);
  for (const Member& member : members) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, member.name.c_str());
    archive_entry_set_filetype(entry, member.type);
    archive_entry_set_perm(entry, member.mode);
    archive_entry_set_uid(entry, 4242);
    archive_entry_set_gid(entry, 4242);
    archive_entry_set_mtime(entry, 1700000000, 0);
    if (member.type == AE_IFLNK) archive_entry_set_symlink(entry, member.link.c_str());
    if (member.type == 0) {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_hardlink(entry, member.link.c_str());
    }
    if (member.type == AE_IFREG) archive_entry_set_size(entry, member.content.size());
    archive_write_header(writer, entry);
    if (!member.content.empty())
      archive_write_data(writer, member.content.data(), member.content.size());
    archive_entry_free(entry);
  }
  archive_write_close(writer);
  archive_write_free(writer);
  return out;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string sha256_of(const std::string& path) {
  std::string sum = testing::sh_output("sha256sum < '" + path + "' | cut -c1-64");
  return sum.substr(0, 64);
}

std::vector<std::string> paths_of(const UnpackedFiles& unpacked) {
  std::vector<std::string> paths;
  for (const OutputFile& file : unpacked.files) paths.push_back(file.path);
  return paths;
}

TEST(OutputUnpacker, FilesLandUnderTheirExactNamesWithSizeAndSha256) {
  testing::TempDir dir;
  std::vector<std::string> names = {"res/a\\b.csv",
                                    "res/tab\there",
                                    "res/new\nline",
                                    "res/caf\xc3\xa9",
                                    "res/raw\xe9",
                                    "./dot/x",
                                    "long/" + std::string(200, 'n')};
  std::vector<Member> members = {{"res/", AE_IFDIR, 0755}};
  for (const std::string& name : names)
    members.push_back({name, AE_IFREG, 0644, "bytes of " + name});
  UnpackedFiles unpacked = unpack_outputs(tar_of(members), dir.path());
  EXPECT_EQ(unpacked.error, "");
  EXPECT_TRUE(unpacked.refused.empty());
  EXPECT_TRUE(unpacked.unwritten.empty());
  ASSERT_EQ(unpacked.files.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string path = i == 5 ? "dot/x" : names[i];
    const OutputFile& file = unpacked.files[i];
    EXPECT_EQ(file.path, path);
    EXPECT_EQ(read(dir.file(path)), "bytes of " + names[i]);
    EXPECT_EQ(file.size, ("bytes of " + names[i]).size());
    EXPECT_EQ(file.sha256, sha256_of(dir.file(path)));
  }
}

TEST(OutputUnpacker, PaxNamesComeBackByteForByteToo) {
  testing::TempDir dir;
  UnpackedFiles unpacked = unpack_outputs(tar_of({{"caf\xc3\xa9.csv", AE_IFREG, 0644, "x"},
                                                  {std::string(150, 'p'), AE_IFREG, 0644, "y"}},
                                                 true),
                                          dir.path());
  EXPECT_EQ(paths_of(unpacked),
            (std::vector<std::string>{"caf\xc3\xa9.csv", std::string(150, 'p')}))
      << unpacked.error;
  EXPECT_EQ(read(dir.file("caf\xc3\xa9.csv")), "x");
}

TEST(OutputUnpacker, ByteByByteAsItArrivesItIsTheSame) {
  testing::TempDir whole_dir, piece_dir;
  std::vector<Member> members = {{"a.txt", AE_IFREG, 0644, std::string(100000, 'a')},
                                 {"d/", AE_IFDIR, 0755},
                                 {"d/b.txt", AE_IFREG, 0600, "b"}};
  std::string stream = tar_of(members);
  UnpackedFiles whole = unpack_outputs(stream, whole_dir.path());
  OutputUnpacker unpacker(piece_dir.path());
  for (char c : stream) unpacker.feed(std::string_view(&c, 1));
  UnpackedFiles pieces = unpacker.finish();
  EXPECT_EQ(pieces.error, "");
  ASSERT_EQ(paths_of(pieces), (std::vector<std::string>{"a.txt", "d/b.txt"}));
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(pieces.files[i].sha256, whole.files[i].sha256);
    EXPECT_EQ(pieces.files[i].size, whole.files[i].size);
  }
  EXPECT_EQ(read(piece_dir.file("a.txt")), std::string(100000, 'a'));
}

TEST(OutputUnpacker, LinksAreRefusedAndNeverFollowed) {
  testing::TempDir dir, elsewhere;
  std::string secret = elsewhere.write("secret", "secret\n");
  UnpackedFiles unpacked = unpack_outputs(tar_of({{"leak.csv", AE_IFLNK, 0777, "", secret},
                                                  {"up", AE_IFLNK, 0777, "", elsewhere.path()},
                                                  {"up/planted", AE_IFREG, 0644, "planted"},
                                                  {"hard", 0, 0644, "", secret},
                                                  {"fifo", AE_IFIFO, 0644}}),
                                          dir.path());
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir.file("leak.csv"))));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir.file("hard"))));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir.file("fifo"))));
  // `up` is a folder of ours, not a way to elsewhere.
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(dir.file("up"))));
  EXPECT_EQ(read(dir.file("up/planted")), "planted");
  EXPECT_FALSE(fs::exists(elsewhere.file("planted")));
  EXPECT_EQ(read(secret), "secret\n");
  EXPECT_EQ(paths_of(unpacked), (std::vector<std::string>{"up/planted"}));
  ASSERT_EQ(unpacked.refused.size(), 4u);
  EXPECT_EQ(unpacked.refused[0],
            "leak.csv: a symbolic link, which is never followed here; not brought back");
  EXPECT_NE(unpacked.refused[2].find("hard: a hard link to " + secret), std::string::npos);
  EXPECT_NE(unpacked.refused[3].find("fifo: not a regular file"), std::string::npos);
}

TEST(OutputUnpacker, ALinkAlreadyInTheFolderIsReplacedNotWrittenThrough) {
  testing::TempDir dir, elsewhere;
  fs::create_symlink(elsewhere.path(), dir.file("res"));
  std::string target = elsewhere.write("y", "theirs");
  fs::create_symlink(target, dir.file("y"));
  UnpackedFiles unpacked = unpack_outputs(
      tar_of({{"res/x", AE_IFREG, 0644, "x"}, {"y", AE_IFREG, 0644, "ours"}}), dir.path());
  EXPECT_EQ(paths_of(unpacked), (std::vector<std::string>{"res/x", "y"}));
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(dir.file("res"))));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir.file("y"))));
  EXPECT_EQ(read(dir.file("res/x")), "x");
  EXPECT_EQ(read(dir.file("y")), "ours");
  EXPECT_FALSE(fs::exists(elsewhere.file("x")));
  EXPECT_EQ(read(target), "theirs");
}

TEST(OutputUnpacker, PathsThatLeaveTheFolderAreRefusedAbsoluteOnesComeInside) {
  testing::TempDir dir;
  UnpackedFiles unpacked = unpack_outputs(tar_of({{"../out.txt", AE_IFREG, 0644, "1"},
                                                  {"a/../../out.txt", AE_IFREG, 0644, "2"},
                                                  {"/abs/in.txt", AE_IFREG, 0644, "3"},
                                                  {"..", AE_IFDIR, 0755}}),
                                          dir.path());
  EXPECT_FALSE(fs::exists(dir.file("../out.txt")));
  EXPECT_EQ(paths_of(unpacked), (std::vector<std::string>{"abs/in.txt"}));
  EXPECT_EQ(read(dir.file("abs/in.txt")), "3");
  ASSERT_EQ(unpacked.refused.size(), 3u);
  EXPECT_EQ(unpacked.refused[0],
            "../out.txt: a `..` in it leaves the job's folder; not brought back");
}

TEST(OutputUnpacker, ModesLoseSetUidSetGidStickyAndOthersWrites) {
  testing::TempDir dir;
  UnpackedFiles unpacked = unpack_outputs(tar_of({{"suid", AE_IFREG, 04755, "x"},
                                                  {"sgid", AE_IFREG, 02777, "x"},
                                                  {"none", AE_IFREG, 0000, "x"},
                                                  {"open/", AE_IFDIR, 01777}}),
                                          dir.path());
  ASSERT_EQ(unpacked.files.size(), 3u);
  auto mode_of = [&](const char* name) {
    struct stat info {};
    EXPECT_EQ(lstat(dir.file(name).c_str(), &info), 0) << name;
    EXPECT_EQ(info.st_uid, geteuid()) << name;
    return info.st_mode & 07777;
  };
  EXPECT_EQ(mode_of("suid"), 0755u);
  EXPECT_EQ(mode_of("sgid") & ~0022u, 0755u);
  EXPECT_EQ(mode_of("sgid") & 07022u, 0u);
  EXPECT_EQ(mode_of("none"), 0600u);
  EXPECT_EQ(mode_of("open") & 07022u, 0u);
}

TEST(OutputUnpacker, AFileNamedTwiceIsOneAndAHardLinkJoinsFilesOfTheStream) {
  testing::TempDir dir;
  UnpackedFiles unpacked = unpack_outputs(
      tar_of({{"a", AE_IFREG, 0644, "aa"}, {"a", 0, 0644, "", "a"}, {"b", 0, 0644, "", "a"}}),
      dir.path());
  EXPECT_TRUE(unpacked.refused.empty());
  ASSERT_EQ(paths_of(unpacked), (std::vector<std::string>{"a", "b"}));
  ASSERT_GE(unpacked.files.size(), 2u);
  EXPECT_EQ(unpacked.files[1].size, 2u);
  EXPECT_EQ(unpacked.files[1].sha256, unpacked.files[0].sha256);
  EXPECT_EQ(read(dir.file("b")), "aa");
}

TEST(OutputUnpacker, AStreamCutShortKeepsTheWholeFilesBeforeAndSaysSo) {
  testing::TempDir dir;
  std::string stream =
      tar_of({{"whole", AE_IFREG, 0644, "w"}, {"cut", AE_IFREG, 0644, std::string(10000, 'c')}});
  UnpackedFiles unpacked = unpack_outputs(stream.substr(0, 1024 + 512 + 4096), dir.path());
  EXPECT_EQ(paths_of(unpacked), (std::vector<std::string>{"whole"}));
  EXPECT_FALSE(fs::exists(dir.file("cut")));
  EXPECT_NE(unpacked.error.find("broke in cut"), std::string::npos) << unpacked.error;
}

TEST(OutputUnpacker, AnEmptyStreamIsNoFilesAndGarbageIsAnError) {
  testing::TempDir dir;
  UnpackedFiles empty = unpack_outputs("", dir.path());
  EXPECT_EQ(empty.error, "");
  EXPECT_TRUE(empty.files.empty());
  UnpackedFiles garbage = unpack_outputs(std::string(4096, 'g'), dir.path());
  EXPECT_NE(garbage.error, "");
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(OutputUnpacker, ManyRefusalsAreCountedNotAllKept) {
  testing::TempDir dir;
  std::vector<Member> members;
  for (std::size_t i = 0; i < k_output_note_limit + 5; ++i)
    members.push_back({"l" + std::to_string(i), AE_IFLNK, 0777, "", "/"});
  UnpackedFiles unpacked = unpack_outputs(tar_of(members), dir.path());
  ASSERT_EQ(unpacked.refused.size(), k_output_note_limit + 1);
  EXPECT_EQ(unpacked.refused.back(), "and 5 more");
}

}  // namespace
}  // namespace runner
