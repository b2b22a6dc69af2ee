// The SHA-256 (OpenSSL's libcrypto) of bytes given piece by piece: a file
// that comes back is digested as it is written. Threading: none.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace runner {

class Sha256 {
 public:
  Sha256();
  void add(std::string_view bytes);
  // Lowercase hex, 64 characters, of every byte added; empty when libcrypto
  // has no SHA-256. Called once, at the end.
  std::string hex();

 private:
  std::unique_ptr<evp_md_ctx_st, void (*)(evp_md_ctx_st*)> m_context;
};

}  // namespace runner
