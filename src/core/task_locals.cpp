#include "core/task_locals.hpp"

#include <utility>

namespace ic {
namespace {

thread_local TaskLocals thread_own;
thread_local TaskLocals* current = nullptr;

}  // namespace

TaskLocals& task_locals() noexcept {
  return current != nullptr ? *current : thread_own;
}

TaskLocals* swap_task_locals(TaskLocals* next) noexcept {
  return std::exchange(current, next);
}

TaskLocals* current_task_locals() noexcept {
  return current;
}

}  // namespace ic
