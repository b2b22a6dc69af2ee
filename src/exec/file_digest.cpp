#include "runner/exec/file_digest.h"

#include <fmt/format.h>
#include <openssl/evp.h>

namespace runner {

Sha256::Sha256() : m_context(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
  if (m_context && EVP_DigestInit_ex(m_context.get(), EVP_sha256(), nullptr) != 1)
    m_context.reset();
}

void Sha256::add(std::string_view bytes) {
  if (m_context) EVP_DigestUpdate(m_context.get(), bytes.data(), bytes.size());
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!m_context || EVP_DigestFinal_ex(m_context.get(), digest, &length) != 1) return {};
  m_context.reset();
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace runner
