// Parsing one journal line into its record. A cold reading of a long
// journal parses hundreds of thousands of lines, and nlohmann::json's lexer
// was most of its time; simdjson parses the line (a few times faster) and
// its value is copied into a nlohmann::json. Where the two could read a
// line differently, nlohmann::json reads it, as before: a line simdjson
// refuses (cut short, invalid UTF-8, glued, ...), one with a \u escape,
// one with a number that is not an integer (nlohmann::json's rounding and
// its reading of integers too big for 64 bits) and one with a -0, which
// nlohmann::json keeps as a signed integer and simdjson cannot tell from 0.
#include "journal_record_parse.h"

#include <simdjson.h>

namespace runner {

namespace {

using nlohmann::json;

// Whether `line` may hold the number -0 (or has that text in a string).
bool may_hold_negative_zero(std::string_view line) {
  for (std::size_t at = line.find("-0"); at != std::string_view::npos;
       at = line.find("-0", at + 1)) {
    std::size_t before = line.find_last_not_of(" \t\r\n", at == 0 ? 0 : at - 1);
    bool starts_value = at == 0 || before == std::string_view::npos || line[before] == ':' ||
                        line[before] == ',' || line[before] == '[';
    char after = at + 2 < line.size() ? line[at + 2] : ' ';
    bool ends_number =
        !(after >= '0' && after <= '9') && after != '.' && after != 'e' && after != 'E';
    if (starts_value && ends_number) return true;
  }
  return false;
}

// Copies `element` into `out`; false when it holds what nlohmann::json
// reads otherwise (a number that is not an integer). `zero`: set when an
// integer 0 was copied.
bool copy_value(simdjson::dom::element element, json& out, bool& zero) {
  using Type = simdjson::dom::element_type;
  switch (element.type()) {
    case Type::OBJECT: {
      out = json::object();
      simdjson::dom::object object = element.get_object().value_unsafe();
      // As nlohmann::json does, a key given twice keeps its last value.
      for (auto [key, value] : object)
        if (!copy_value(value, out[std::string(key)], zero)) return false;
      return true;
    }
    case Type::ARRAY: {
      out = json::array();
      simdjson::dom::array array = element.get_array().value_unsafe();
      for (simdjson::dom::element value : array) {
        out.push_back(nullptr);
        if (!copy_value(value, out.back(), zero)) return false;
      }
      return true;
    }
    case Type::STRING:
      out = std::string(element.get_string().value_unsafe());
      return true;
    case Type::INT64: {
      // nlohmann::json keeps a number without a sign as unsigned.
      std::int64_t value = element.get_int64().value_unsafe();
      if (value < 0) {
        out = value;
      } else {
        out = static_cast<std::uint64_t>(value);
      }
      zero = zero || value == 0;
      return true;
    }
    case Type::UINT64:
      out = element.get_uint64().value_unsafe();
      return true;
    case Type::BOOL:
      out = element.get_bool().value_unsafe();
      return true;
    case Type::NULL_VALUE:
      out = nullptr;
      return true;
    case Type::DOUBLE:
      return false;
  }
  return false;
}

}  // namespace

json parse_journal_record(std::string_view line) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element element;
  if (line.find("\\u") == std::string_view::npos &&
      !parser.parse(line.data(), line.size()).get(element)) {
    json record;
    bool zero = false;
    if (copy_value(element, record, zero) && !(zero && may_hold_negative_zero(line))) return record;
  }
  return json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace runner
