// The tokens of DynamoDB's condition and update expressions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ic::bench::fast_aws {

// Word: a name or keyword; Name: #placeholder; Value: :placeholder; Bad: anything outside
// the grammar, such as the '.' and '[' of a document path.
enum class TokenKind : std::uint8_t { Word, Name, Value, Open, Close, Comma, Operator, End, Bad };

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;
};

// ASCII case-insensitive equality: keywords and function names ignore case.
bool iequals(std::string_view a, std::string_view b);

// One token of lookahead over `text`, which must outlive it. Copyable, to look further ahead.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) { advance(); }

  const Token& peek() const { return current_; }
  Token take() {
    const Token token = current_;
    advance();
    return token;
  }
  bool at_keyword(std::string_view word) const {
    return current_.kind == TokenKind::Word && iequals(current_.text, word);
  }
  bool at(TokenKind kind, std::string_view text = {}) const {
    return current_.kind == kind && (text.empty() || current_.text == text);
  }

 private:
  void advance();

  std::string_view text_;
  std::size_t pos_ = 0;
  Token current_;
};

}  // namespace ic::bench::fast_aws
