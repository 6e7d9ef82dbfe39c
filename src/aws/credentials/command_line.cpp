#include "aws/credentials/command_line.hpp"

#include <fmt/format.h>

#include <optional>

namespace ic::aws {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

constexpr std::string_view kRefusedUnquoted = "|&;<>()$`*?[";

// Collects the words; `word` is engaged while one is open (so "" makes an empty word).
class Splitter {
 public:
  explicit Splitter(std::string_view line) : line_(line) {}

  std::expected<std::vector<std::string>, std::string> run() {
    while (pos_ < line_.size()) {
      const char c = line_[pos_];
      if (is_blank(c)) {
        close_word();
        ++pos_;
      } else if (auto failed = step(c)) {
        return std::unexpected(std::move(*failed));
      }
    }
    close_word();
    if (words_.empty()) return std::unexpected("credential_process is empty");
    return std::move(words_);
  }

 private:
  // Handles one non-blank token starting at pos_; returns a reason when refused.
  std::optional<std::string> step(char c) {
    const bool word_start = !word_;
    if (c == '\'') return single_quoted();
    if (c == '"') return double_quoted();
    if (c == '\\') return escaped();
    // In the first word, sh reads NAME=value as an assignment and a leading ! as negation.
    const bool first_word = words_.empty();
    if (kRefusedUnquoted.find(c) != std::string_view::npos ||
        (word_start && (c == '#' || c == '~' || (first_word && c == '!'))) ||
        (first_word && c == '=')) {
      return refused(c, pos_);
    }
    word().push_back(c);
    ++pos_;
    return std::nullopt;
  }

  std::optional<std::string> single_quoted() {
    const auto end = line_.find('\'', pos_ + 1);
    if (end == std::string_view::npos) return unterminated("'");
    word().append(line_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return std::nullopt;
  }

  std::optional<std::string> double_quoted() {
    std::string& out = word();
    for (std::size_t i = pos_ + 1; i < line_.size(); ++i) {
      const char c = line_[i];
      if (c == '"') {
        pos_ = i + 1;
        return std::nullopt;
      }
      if (c == '$' || c == '`') return refused(c, i);
      if (c == '\\' && i + 1 < line_.size()) {
        const char next = line_[i + 1];
        if (next == '\n') {
          ++i;
          continue;
        }
        if (std::string_view("\"\\$`").find(next) != std::string_view::npos) {
          out.push_back(next);
          ++i;
          continue;
        }
      }
      out.push_back(c);
    }
    return unterminated("\"");
  }

  std::optional<std::string> escaped() {
    if (pos_ + 1 >= line_.size()) {
      return std::string("credential_process ends with a lone backslash");
    }
    if (line_[pos_ + 1] != '\n') word().push_back(line_[pos_ + 1]);
    pos_ += 2;
    return std::nullopt;
  }

  std::string& word() {
    if (!word_) word_.emplace();
    return *word_;
  }
  void close_word() {
    if (word_) words_.push_back(std::move(*word_));
    word_.reset();
  }
  static std::string refused(char c, std::size_t at) {
    return fmt::format(
        "credential_process uses shell syntax ('{}' at byte {}), which is not run through a "
        "shell: put the pipeline in a script and name the script",
        c, at);
  }
  static std::string unterminated(std::string_view quote) {
    return fmt::format("credential_process has an unterminated {} quote", quote);
  }

  std::string_view line_;
  std::size_t pos_ = 0;
  std::optional<std::string> word_;
  std::vector<std::string> words_;
};

}  // namespace

std::expected<std::vector<std::string>, std::string> split_command_line(std::string_view line) {
  return Splitter(line).run();
}

}  // namespace ic::aws
