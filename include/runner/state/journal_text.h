// Strings in the journal, byte for byte. A JSON string holds Unicode text
// only, but commands, parameters and file names are bytes: a string that is
// valid UTF-8 is stored as a plain string (readable, as journals always
// were), any other as {"hex": "636166e9"}, which journal_text() turns back
// into the same bytes. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace runner {

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool valid_utf8(std::string_view text);

// `text` as the journal stores it.
nlohmann::ordered_json exact_text(std::string_view text);

// The bytes of a value exact_text() wrote, or of a plain string (older
// journals); empty for anything else.
std::string journal_text(const nlohmann::json& value);

// journal_text() of record[key]; empty when the key is missing.
std::string journal_text(const nlohmann::json& record, const char* key);

}  // namespace runner
