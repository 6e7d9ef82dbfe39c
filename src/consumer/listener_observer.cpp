#include "consumer/listener_observer.hpp"

namespace ic::consumer {

std::string_view to_string(DispositionKind kind) {
  switch (kind) {
    case DispositionKind::Ack:
      return "ack";
    case DispositionKind::RetryLater:
      return "retry_later";
    case DispositionKind::DeadLetter:
      return "dead_letter";
  }
  return "unknown";
}

std::string_view to_string(BatchAction action) {
  switch (action) {
    case BatchAction::Delete:
      return "delete";
    case BatchAction::ChangeVisibility:
      return "change_visibility";
  }
  return "unknown";
}

std::string_view to_string(ClaimExtension extension) {
  switch (extension) {
    case ClaimExtension::Extended:
      return "true";
    case ClaimExtension::Lost:
      return "false";
    case ClaimExtension::Unanswered:
      return "unanswered";
  }
  return "unknown";
}

}  // namespace ic::consumer
