#include "core/small_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <system_error>

namespace ic {

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

std::expected<std::string, std::string> read_small_file(const std::string& path,
                                                        std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(fmt::format("cannot be read: {}", errno_text(errno)));
  std::string out(max_bytes + 1, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  if (in.bad()) return std::unexpected("cannot be read: I/O error");
  out.resize(static_cast<std::size_t>(in.gcount()));
  if (out.size() > max_bytes) {
    return std::unexpected(fmt::format("is larger than {} bytes", max_bytes));
  }
  return out;
}

std::string trim_blank(std::string text) {
  const auto blank = " \t\r\n";
  text.erase(0, text.find_first_not_of(blank));
  text.erase(text.find_last_not_of(blank) + 1);
  return text;
}

}  // namespace ic
