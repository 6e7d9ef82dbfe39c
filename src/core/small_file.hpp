// Reads a small file that configuration names -- a token, a key -- whole, with a size bound so
// a wrong path (a device, a log file) cannot make us allocate without limit; and the errno text
// such failures quote.
#pragma once

#include <cstddef>
#include <expected>
#include <string>

namespace ic {

// The file's bytes; otherwise a reason ("cannot be read: No such file or directory", "is
// larger than 65536 bytes") that names neither the path nor any content.
[[nodiscard]] std::expected<std::string, std::string> read_small_file(const std::string& path,
                                                                      std::size_t max_bytes);

// The text of an errno value ("No such file or directory"); unlike strerror, thread-safe.
[[nodiscard]] std::string errno_text(int error);

// `text` without leading and trailing spaces, tabs and line breaks.
[[nodiscard]] std::string trim_blank(std::string text);

}  // namespace ic
