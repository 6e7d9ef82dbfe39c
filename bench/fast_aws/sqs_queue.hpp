// An SQS queue in memory: its messages, the order visible ones are received in, the timers
// that make in-flight and delayed ones visible again, and the long polls waiting on it.
#pragma once

#include <microhttpd.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fast_aws/common.hpp"
#include "fast_aws/request.hpp"

namespace ic::bench::fast_aws {

enum class MessageState : std::uint8_t { Visible, InFlight, Delayed };

struct Message {
  std::string id;
  std::string body;
  std::string md5;
  // Name and the attribute's JSON ({"DataType":..,"StringValue":..}), written back verbatim.
  std::vector<std::pair<std::string, std::string>> attributes;
  std::int64_t sent_ms = 0;
  std::int64_t first_receive_ms = 0;
  std::int64_t receives = 0;
  // Bumped by every receive and visibility change, so that timers set before it are stale.
  std::uint64_t generation = 0;
  MessageState state = MessageState::Visible;
};

// When an in-flight or delayed message becomes visible. Stale once the message's generation
// moved on (deleted, received again, visibility changed): skipped when it comes due.
struct Timer {
  Steady::time_point due;
  std::uint64_t seq;
  std::uint64_t generation;
  bool operator>(const Timer& other) const { return due > other.due; }
};

struct Queue {
  std::uint32_t index = 0;
  std::string name;
  std::string url;
  std::string arn;
  std::map<std::string, std::string, std::less<>> attributes;  // the settable ones
  std::int64_t visibility_timeout = 30;
  std::int64_t delay_seconds = 0;
  std::int64_t maximum_message_size = 262144;
  std::int64_t wait_seconds = 0;
  std::int64_t created_s = 0;
  std::int64_t modified_s = 0;

  std::unordered_map<std::uint64_t, Message> messages;
  // Visible messages in the order they became visible. A message deleted while visible (by a
  // delete with its latest handle after its visibility ran out) leaves a stale entry, skipped.
  std::deque<std::uint64_t> visible;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
  std::size_t counts[3] = {0, 0, 0};  // by MessageState
  std::deque<Request*> waiters;       // suspended long polls, oldest first
  std::uint64_t next_seq = 1;

  std::size_t count(MessageState state) const { return counts[static_cast<int>(state)]; }
  void move(Message& message, MessageState state) {
    --counts[static_cast<int>(message.state)];
    ++counts[static_cast<int>(state)];
    message.state = state;
  }
};

// Makes due timers' messages visible.
void promote(Queue& queue, Steady::time_point now);

// Moves up to `count` of the queue's waiters (oldest first) into `wake`.
void take_waiters(Queue& queue, std::size_t count, std::vector<MHD_Connection*>& wake);

// Resumes the suspended long polls in `wake`. Callers let go of the SQS lock first: each
// resumed poll takes it again.
void resume(const std::vector<MHD_Connection*>& wake);

}  // namespace ic::bench::fast_aws
