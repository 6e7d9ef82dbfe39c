// MD5OfMessageBody: the digest SQS reports for every message sent and received.
#pragma once

#include <openssl/evp.h>

#include <string>
#include <string_view>

namespace ic::bench::fast_aws {

class Md5 {
 public:
  Md5() : md_(EVP_MD_fetch(nullptr, "MD5", nullptr)) {}
  ~Md5() { EVP_MD_free(md_); }
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;

  // Lower-case hex, as SQS writes MD5OfMessageBody; empty if this OpenSSL has no MD5 (FIPS).
  std::string hex(std::string_view data) const;

 private:
  EVP_MD* md_;  // fetched once: an implicit fetch per digest costs more than the digest
};

}  // namespace ic::bench::fast_aws
