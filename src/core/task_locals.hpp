// What belongs to one logical task (one delivery of a message) rather than to a thread. On the
// event-driven core many deliveries interleave on one thread, so a thread_local would lend one
// delivery's trace context and message id to another's log lines. Each spawned task owns a
// TaskLocals; whatever suspends a coroutine keeps a pointer to the one current then and puts it
// back when the coroutine resumes (Resumable, core/task.hpp).
//
//   task_locals().message_id = message.message_id;   // inside the delivery's task
//   logger.info("...");                              // reads task_locals()
#pragma once

#include <string>

namespace ic {

struct TaskLocals {
  std::string traceparent;  // core/trace_context.hpp's current header value; empty: none
  std::string message_id;   // the delivery being handled; empty: none
};

// The current task's locals, or this thread's own outside any task. Valid while that task (or
// thread) lives. Thread-safety: each thread sees its own.
[[nodiscard]] TaskLocals& task_locals() noexcept;

// Makes `next` current (nullptr: this thread's own) and returns what was current before, as
// the same kind of pointer. For the plumbing that resumes coroutines and starts tasks.
TaskLocals* swap_task_locals(TaskLocals* next) noexcept;

// The pointer swap_task_locals() would return now: what a suspending coroutine keeps.
[[nodiscard]] TaskLocals* current_task_locals() noexcept;

}  // namespace ic
