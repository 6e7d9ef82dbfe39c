// MD5OfMessageBody (md5.hpp).
#include "fast_aws/md5.hpp"

namespace ic::bench::fast_aws {

std::string Md5::hex(std::string_view data) const {
  if (md_ == nullptr) return {};
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, md_, nullptr) != 1) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (unsigned int i = 0; i < size; ++i) {
    out[2 * i] = kHex[digest[i] >> 4U];
    out[2 * i + 1] = kHex[digest[i] & 0xFU];
  }
  return out;
}

}  // namespace ic::bench::fast_aws
