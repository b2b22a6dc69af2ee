// The regular files under a folder, listed with one open and its reads of
// each folder, none of a file: what a job's collected outputs are read
// from. Reading only.
//
// Threading: none.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

namespace runner {

// How many levels of subfolders are listed: no output needs more, and each
// level holds a descriptor open.
inline constexpr int k_folder_files_depth = 32;
// How many entries (files, folders and the rest) are looked at in all: a
// job's outputs hold far fewer, and each file found is held, then read.
inline constexpr std::size_t k_folder_files_entries = 100000;

struct FolderFiles {
  std::vector<std::filesystem::path> files;
  // More than `entries` were there: `files` holds those found first.
  bool cut_short = false;
};

// The regular files under `folder` and its subfolders, each `folder`/…/name,
// in path order. As std::filesystem::recursive_directory_iterator walks it:
// `folder` itself may be a symbolic link, a link below it to a folder is not
// followed, a link to a regular file is listed; a subfolder that cannot be
// opened is passed over, and so is a folder more than k_folder_files_depth
// levels below `folder` (what wrote there may be hostile), and the entries
// after the first `entries`. nullopt when `folder` is not a folder that can
// be opened.
std::optional<FolderFiles> regular_files_under(const std::filesystem::path& folder,
                                               std::size_t entries = k_folder_files_entries);

}  // namespace runner
