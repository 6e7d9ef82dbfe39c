// Recursive descent over the grammar of expression_parser.hpp.
#include "fast_aws/expression_parser.hpp"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "fast_aws/expression_lexer.hpp"

namespace ic::bench::fast_aws {
namespace {

// DynamoDB's message for a token out of place, with what was expected there if given.
std::string syntax_error(std::string_view expression, std::string_view token,
                         std::string_view expected = {}) {
  std::string message = "Invalid " + std::string(expression) + ": Syntax error; token: \"" +
                        std::string(token) + "\"";
  if (!expected.empty()) message += ", expected " + std::string(expected);
  return message;
}

// `text` in double quotes. Appended rather than "\"" + text: GCC 12 -O3 raises a false
// -Wrestrict on a literal plus a std::string (GCC bug 105329).
std::string quoted(std::string_view text) {
  std::string out(1, '"');
  out.append(text);
  out += '"';
  return out;
}

// Errors are DynamoDB's ValidationException messages; the first one is kept and ends the
// parse.
class Parser {
 public:
  explicit Parser(std::string_view text) : lexer_(text) {}

  std::expected<Program, std::string> condition() {
    program_.root = disjunction();
    return finish();
  }

  std::expected<Program, std::string> update() {
    std::vector<std::string> clauses;
    while (error_.empty() && !lexer_.at(TokenKind::End)) {
      const Token keyword = lexer_.take();
      std::string clause(keyword.text);
      std::ranges::transform(clause, clause.begin(), [](char c) {
        return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      });
      if (keyword.kind != TokenKind::Word ||
          (clause != "SET" && clause != "REMOVE" && clause != "ADD" && clause != "DELETE")) {
        fail(syntax_error("UpdateExpression", keyword.text));
        break;
      }
      if (clause == "DELETE") {
        fail("fast_aws does not implement DELETE in an UpdateExpression");
        break;
      }
      if (std::ranges::find(clauses, clause) != clauses.end()) {
        fail("Invalid UpdateExpression: The \"" + clause +
             "\" section can only be used once in an update expression;");
        break;
      }
      clauses.push_back(clause);
      const Action::Kind kind = clause == "SET"
                                    ? Action::Kind::Set
                                    : (clause == "ADD" ? Action::Kind::Add : Action::Kind::Remove);
      do {
        program_.actions.push_back(action(kind));
      } while (error_.empty() && accept(TokenKind::Comma));
      if (error_.empty() && !lexer_.at(TokenKind::End) && !lexer_.at(TokenKind::Word)) {
        fail(syntax_error("UpdateExpression", lexer_.peek().text));
      }
    }
    if (program_.actions.empty() && error_.empty()) fail("Invalid UpdateExpression: empty");
    return finish();
  }

 private:
  std::expected<Program, std::string> finish() {
    if (error_.empty() && !lexer_.at(TokenKind::End)) {
      fail(syntax_error("expression", lexer_.peek().text));
    }
    if (!error_.empty()) return std::unexpected(error_);
    return std::move(program_);
  }

  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  bool accept(TokenKind kind, std::string_view text = {}) {
    if (!lexer_.at(kind, text)) return false;
    lexer_.take();
    return true;
  }

  void expect(TokenKind kind, std::string_view text) {
    if (!accept(kind, text)) {
      fail(syntax_error("expression", lexer_.peek().text, quoted(text)));
    }
  }

  // At a function call: a word, then '('.
  bool at_call() const {
    if (!lexer_.at(TokenKind::Word)) return false;
    Lexer ahead = lexer_;
    ahead.take();
    return ahead.at(TokenKind::Open);
  }

  // Takes a function's name and its '('; returns the name.
  Token take_call() {
    const Token name = lexer_.take();
    lexer_.take();
    return name;
  }

  int add(Operand operand) {
    program_.operands.push_back(std::move(operand));
    return static_cast<int>(program_.operands.size()) - 1;
  }

  int add(Condition condition) {
    program_.conditions.push_back(std::move(condition));
    return static_cast<int>(program_.conditions.size()) - 1;
  }

  static void note(std::vector<std::string>& used, std::string_view placeholder) {
    if (std::ranges::find(used, placeholder) == used.end()) used.emplace_back(placeholder);
  }

  // An update's action of the clause `kind`: path = sum (SET), path (REMOVE), path :value (ADD).
  Action action(Action::Kind kind) {
    Action action{.kind = kind};
    action.path = path();
    if (kind == Action::Kind::Set) {
      expect(TokenKind::Operator, "=");
      action.operand = sum();
    } else if (kind == Action::Kind::Add) {
      action.operand = value();
    }
    return action;
  }

  int path() {
    const Token token = lexer_.take();
    if (token.kind != TokenKind::Word && token.kind != TokenKind::Name) {
      fail(syntax_error("expression", token.text, "an attribute name"));
      return -1;
    }
    if (lexer_.at(TokenKind::Bad)) {
      fail("fast_aws does not implement nested document paths (\"" + std::string(token.text) +
           std::string(lexer_.peek().text) + "\")");
      return -1;
    }
    if (token.kind == TokenKind::Name) note(program_.names, token.text);
    return add(Operand{.kind = Operand::Kind::Path, .text = std::string(token.text)});
  }

  int value() {
    const Token token = lexer_.take();
    if (token.kind != TokenKind::Value) {
      fail(syntax_error("expression", token.text, "a :value"));
      return -1;
    }
    note(program_.values, token.text);
    return add(Operand{.kind = Operand::Kind::Value, .text = std::string(token.text)});
  }

  // What a condition compares: a :value or a path.
  int value_or_path() { return lexer_.at(TokenKind::Value) ? value() : path(); }

  // A value, a path, or if_not_exists(path, operand).
  int operand() {
    if (lexer_.at(TokenKind::Value)) return value();
    if (!at_call()) return path();
    if (!iequals(lexer_.peek().text, "if_not_exists")) {
      fail("fast_aws does not implement the function " + std::string(lexer_.peek().text) +
           " in an UpdateExpression");
      return -1;
    }
    take_call();
    Operand call{.kind = Operand::Kind::IfNotExists};
    call.left = path();
    expect(TokenKind::Comma, ",");
    call.right = operand();
    expect(TokenKind::Close, ")");
    return add(std::move(call));
  }

  // operand [+|- operand]
  int sum() {
    const int left = operand();
    if (lexer_.at(TokenKind::Operator, "+") || lexer_.at(TokenKind::Operator, "-")) {
      const bool plus = lexer_.take().text == "+";
      const int right = operand();
      return add(Operand{
          .kind = plus ? Operand::Kind::Plus : Operand::Kind::Minus, .left = left, .right = right});
    }
    return left;
  }

  // next [KEYWORD next]..., left-associative: OR joins conjunctions, AND joins negations.
  int chain(std::string_view keyword, Condition::Kind kind, int (Parser::*next)()) {
    int left = (this->*next)();
    while (error_.empty() && lexer_.at_keyword(keyword)) {
      lexer_.take();
      left = add(Condition{.kind = kind, .left = left, .right = (this->*next)()});
    }
    return left;
  }

  int disjunction() { return chain("OR", Condition::Kind::Or, &Parser::conjunction); }
  int conjunction() { return chain("AND", Condition::Kind::And, &Parser::negation); }

  int negation() {
    if (lexer_.at_keyword("NOT")) {
      lexer_.take();
      return add(Condition{.kind = Condition::Kind::Not, .left = negation()});
    }
    return primary();
  }

  // ( condition ), a function, or a comparison.
  int primary() {
    if (accept(TokenKind::Open)) {
      const int inner = disjunction();
      expect(TokenKind::Close, ")");
      return inner;
    }
    return at_call() ? function() : comparison();
  }

  // attribute_exists(path), attribute_not_exists(path) or begins_with(path, value_or_path).
  int function() {
    const Token name = take_call();
    Condition call{};
    if (iequals(name.text, "attribute_exists") || iequals(name.text, "attribute_not_exists")) {
      call.kind = iequals(name.text, "attribute_exists") ? Condition::Kind::Exists
                                                         : Condition::Kind::NotExists;
      call.left = path();
    } else if (iequals(name.text, "begins_with")) {
      call.kind = Condition::Kind::BeginsWith;
      call.left = path();
      expect(TokenKind::Comma, ",");
      call.right = value_or_path();
    } else {
      fail("fast_aws does not implement the function " + std::string(name.text) +
           " in a ConditionExpression");
      return -1;
    }
    expect(TokenKind::Close, ")");
    return add(std::move(call));
  }

  // value_or_path OP value_or_path, OP one of = <> < <= > >=.
  int comparison() {
    const int left = value_or_path();
    const Token op = lexer_.take();
    if (op.kind != TokenKind::Operator || op.text == "+" || op.text == "-") {
      fail(lexer_.at(TokenKind::End) && op.kind == TokenKind::End
               ? syntax_error("ConditionExpression", "<EOF>")
               : "fast_aws does not implement \"" + std::string(op.text) +
                     "\" in a ConditionExpression");
      return -1;
    }
    const int right = value_or_path();
    return add(Condition{.kind = Condition::Kind::Compare,
                         .op = std::string(op.text),
                         .left = left,
                         .right = right});
  }

  Lexer lexer_;
  Program program_;
  std::string error_;
};

}  // namespace

std::expected<Program, std::string> parse_condition(std::string_view text) {
  return Parser(text).condition();
}

std::expected<Program, std::string> parse_update(std::string_view text) {
  return Parser(text).update();
}

}  // namespace ic::bench::fast_aws
