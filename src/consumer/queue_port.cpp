#include "consumer/queue_port.hpp"

namespace ic::consumer {

std::string_view to_string(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::Retryable:
      return "retryable";
    case ErrorClass::Throttling:
      return "throttling";
    case ErrorClass::Permanent:
      return "permanent";
  }
  return "unknown";
}

}  // namespace ic::consumer
