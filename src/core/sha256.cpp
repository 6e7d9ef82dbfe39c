#include "core/sha256.hpp"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "core/hex.hpp"

namespace ic {
namespace {

// OpenSSL 3 resolves an algorithm by name on every implicit use (EVP_sha256()), which costs
// more than hashing a signed request: fetch SHA-256 once.
const EVP_MD* sha256_md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);  // lives for the process
  if (md == nullptr) throw std::runtime_error("OpenSSL has no SHA-256");
  return md;
}

// One digest context per thread, reused: allocation is another measurable share of a signature.
EVP_MD_CTX* thread_md_ctx() {
  thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                                 &EVP_MD_CTX_free);
  if (ctx == nullptr) throw std::runtime_error("EVP_MD_CTX_new failed");
  return ctx.get();
}

}  // namespace

Sha256Digest sha256(std::initializer_list<std::string_view> parts) {
  EVP_MD_CTX* ctx = thread_md_ctx();
  Sha256Digest out{};
  bool ok = EVP_DigestInit_ex2(ctx, sha256_md(), nullptr) == 1;
  for (const auto part : parts) ok = ok && EVP_DigestUpdate(ctx, part.data(), part.size()) == 1;
  ok = ok && EVP_DigestFinal_ex(ctx, out.data(), nullptr) == 1;
  if (!ok) throw std::runtime_error("SHA-256 failed");
  return out;
}

std::string sha256_hex(std::string_view data) {
  return to_hex(sha256({data}));
}

}  // namespace ic
