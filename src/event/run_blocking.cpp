#include "event/run_blocking.hpp"

namespace ic::event {
namespace {

thread_local bool thread_loop_busy = false;

EventLoop& this_threads_loop() {
  // Destroyed at thread exit, with the connections its transports kept alive.
  thread_local const std::unique_ptr<EventLoop> owned = std::make_unique<EventLoop>();
  return *owned;
}

}  // namespace

BlockingLoop::BlockingLoop()
    : fresh_(thread_loop_busy ? std::make_unique<EventLoop>() : nullptr),
      loop_(fresh_ ? fresh_.get() : &this_threads_loop()) {
  if (!fresh_) thread_loop_busy = true;
}

BlockingLoop::~BlockingLoop() {
  if (!fresh_) thread_loop_busy = false;
}

}  // namespace ic::event
