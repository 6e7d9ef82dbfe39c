// The visitor idiom for std::visit: one lambda per alternative.
//
//   std::visit(Overloaded{[](const Ack&) { ... }, [](const RetryLater& r) { ... }}, disposition);
#pragma once

namespace ic {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;  // clang 16 lacks aggregate deduction (P1816)

}  // namespace ic
