// Timers and waiters of an SQS queue (sqs_queue.hpp).
#include "fast_aws/sqs_queue.hpp"

namespace ic::bench::fast_aws {

void promote(Queue& queue, Steady::time_point now) {
  while (!queue.timers.empty() && queue.timers.top().due <= now) {
    const Timer timer = queue.timers.top();
    queue.timers.pop();
    const auto it = queue.messages.find(timer.seq);
    if (it == queue.messages.end() || it->second.generation != timer.generation ||
        it->second.state == MessageState::Visible) {
      continue;
    }
    queue.move(it->second, MessageState::Visible);
    queue.visible.push_back(timer.seq);
  }
}

void take_waiters(Queue& queue, std::size_t count, std::vector<MHD_Connection*>& wake) {
  for (; count > 0 && !queue.waiters.empty(); --count) {
    wake.push_back(queue.waiters.front()->connection);
    queue.waiters.pop_front();
  }
}

void resume(const std::vector<MHD_Connection*>& wake) {
  for (MHD_Connection* connection : wake) MHD_resume_connection(connection);
}

}  // namespace ic::bench::fast_aws
