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

// The regular files under `folder` and its subfolders, each `folder`/…/name,
// in path order. As std::filesystem::recursive_directory_iterator walks it:
// `folder` itself may be a symbolic link, a link below it to a folder is not
// followed, a link to a regular file is listed; a subfolder that cannot be
// opened is passed over, and so is a folder more than k_folder_files_depth
// levels below `folder` (what wrote there may be hostile). nullopt when
// `folder` is not a folder that can be opened.
std::optional<std::vector<std::filesystem::path>> regular_files_under(
    const std::filesystem::path& folder);

}  // namespace runner
