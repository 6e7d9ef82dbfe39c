// INI parsing for the shared config and credentials files.
#include "aws/credentials/credentials_ini.hpp"

#include <filesystem>
#include <system_error>

#include "core/small_file.hpp"

namespace ic::aws {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// '#' or ';' start a comment at the beginning of a value or after whitespace; elsewhere they
// are data (secret keys may contain them in principle, tokens do not).
std::string_view strip_comment(std::string_view value) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    if ((value[i] == '#' || value[i] == ';') && (i == 0 || is_blank(value[i - 1]))) {
      return trim(value.substr(0, i));
    }
  }
  return trim(value);
}

}  // namespace

IniFile parse_ini(std::string_view text) {
  IniFile file;
  IniSection* section = nullptr;
  std::string* last_value = nullptr;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);

    const auto line = trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (is_blank(raw.front())) {  // continuation: a sub-property of the previous key
      if (last_value != nullptr) last_value->append("\n").append(strip_comment(line));
      continue;
    }
    last_value = nullptr;
    if (line.front() == '[') {
      const auto close = line.find(']');
      section = close == std::string_view::npos
                    ? nullptr
                    : &file[std::string(trim(line.substr(1, close - 1)))];
      continue;
    }
    const auto eq = line.find('=');
    if (section == nullptr || eq == std::string_view::npos) continue;
    const auto key = trim(line.substr(0, eq));
    if (key.empty()) continue;
    last_value = &((*section)[std::string(key)] = std::string(strip_comment(line.substr(eq + 1))));
  }
  return file;
}

std::expected<std::optional<IniFile>, std::string> read_ini_file(const std::string& path) {
  std::error_code error;
  if (path.empty() || !std::filesystem::exists(path, error)) return std::nullopt;
  auto text = read_small_file(path, kMaxIniFileBytes);
  if (!text) return std::unexpected(std::move(text.error()));
  return parse_ini(*text);
}

}  // namespace ic::aws
