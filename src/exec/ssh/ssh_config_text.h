// Private to the ssh_config files: the small text operations that reading
// `ssh -G` output and reading ssh_config files share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runner::ssh_config_text {

std::string lowercase(std::string_view text);

// `text` without the blanks and line ends around it.
std::string_view trim(std::string_view text);

// The words of `text`, split at white space.
std::vector<std::string> split_words(std::string_view text);

// The items of `text` split at `separator`, trimmed, empty ones left out.
std::vector<std::string> split_list(std::string_view text, char separator);

// A non-negative decimal number of at most nine digits; nullopt otherwise.
std::optional<int> parse_number(std::string_view text);


}  // namespace runner::ssh_config_text
