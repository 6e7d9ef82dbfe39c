// The tokens of DynamoDB's expressions (expression_lexer.hpp).
#include "fast_aws/expression_lexer.hpp"

#include <algorithm>
#include <cctype>

namespace ic::bench::fast_aws {
namespace {

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::ranges::equal(a, b, [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

void Lexer::advance() {
  while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) {
    ++pos_;
  }
  if (pos_ == text_.size()) {
    current_ = {TokenKind::End, {}};
    return;
  }
  const std::size_t start = pos_;
  const char c = text_[pos_];
  const auto word_end = [&](std::size_t from) {
    while (from < text_.size() && word_char(text_[from])) ++from;
    return from;
  };
  TokenKind kind = TokenKind::Bad;
  if (c == '#' || c == ':') {
    pos_ = word_end(pos_ + 1);
    // A lone '#' or ':' is a bad token of one character (pos_ is already past it).
    kind = pos_ == start + 1 ? TokenKind::Bad : (c == '#' ? TokenKind::Name : TokenKind::Value);
  } else if (word_char(c)) {
    pos_ = word_end(pos_);
    kind = TokenKind::Word;
  } else if (c == '(' || c == ')' || c == ',') {
    ++pos_;
    kind = c == '(' ? TokenKind::Open : (c == ')' ? TokenKind::Close : TokenKind::Comma);
  } else if (c == '<' || c == '>') {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '=' || (c == '<' && text_[pos_] == '>'))) ++pos_;
    kind = TokenKind::Operator;
  } else if (c == '=' || c == '+' || c == '-') {
    ++pos_;
    kind = TokenKind::Operator;
  } else {
    ++pos_;  // '.', '[' (document paths) and anything else: not in the grammar
  }
  current_ = {kind, text_.substr(start, pos_ - start)};
}

}  // namespace ic::bench::fast_aws
