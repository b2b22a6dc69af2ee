// Exact bytes in JSON: plain strings for UTF-8, hex for anything else.
#include "runner/state/journal_text.h"

namespace runner {

namespace {

constexpr char k_hex_digits[] = "0123456789abcdef";

int hex_value(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  if (digit >= 'A' && digit <= 'F') return digit - 'A' + 10;
  return -1;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // overlong
      if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // overlong
      if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
    } else {
      return false;
    }
    if (n - i < length) return false;
    if (bytes[i + 1] < low || bytes[i + 1] > high) return false;
    for (std::size_t k = 2; k < length; ++k)
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF) return false;
    i += length;
  }
  return true;
}

nlohmann::ordered_json exact_text(std::string_view text) {
  if (valid_utf8(text)) return nlohmann::ordered_json(text);
  std::string hex;
  hex.reserve(text.size() * 2);
  for (unsigned char byte : text) {
    hex.push_back(k_hex_digits[byte >> 4]);
    hex.push_back(k_hex_digits[byte & 0xF]);
  }
  nlohmann::ordered_json value = nlohmann::ordered_json::object();
  value["hex"] = std::move(hex);
  return value;
}

std::string journal_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_object()) return std::string();
  auto hex = value.find("hex");
  if (hex == value.end() || !hex->is_string()) return std::string();
  const std::string& digits = hex->get_ref<const std::string&>();
  std::string bytes;
  bytes.reserve(digits.size() / 2);
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2) {
    int high = hex_value(digits[i]), low = hex_value(digits[i + 1]);
    if (high < 0 || low < 0) return std::string();
    bytes.push_back(static_cast<char>(high << 4 | low));
  }
  return bytes;
}

std::string journal_text(const nlohmann::json& record, const char* key) {
  auto it = record.find(key);
  return it == record.end() ? std::string() : journal_text(*it);
}

}  // namespace runner
