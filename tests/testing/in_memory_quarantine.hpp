// consumer::QuarantinePort in memory, for the container's and redrive's tests: keeps each put,
// answers find from them, and can be told to fail the next puts or finds.
#pragma once

#include <map>
#include <vector>

#include "consumer/quarantine.hpp"
#include "core/thread_annotations.hpp"

namespace ic::testing {

// Thread-safety: every method may be called concurrently; put() and find() finish when first
// awaited (they never suspend).
class InMemoryQuarantine final : public consumer::QuarantinePort {
 public:
  Task<std::expected<void, Error>> put(const consumer::QuarantineRecord& record) override {
    MutexLock lock(mutex_);
    if (failing_puts_ > 0) {
      --failing_puts_;
      co_return std::unexpected(Error{.code = "InternalServerError", .message = "scripted"});
    }
    records_.insert_or_assign(record.body_sha256, record);
    puts_.push_back(record);
    co_return std::expected<void, Error>{};
  }
  Task<std::expected<std::optional<consumer::QuarantineRecord>, Error>> find(
      std::string_view body_sha256) override {
    MutexLock lock(mutex_);
    ++finds_;
    if (failing_finds_ > 0) {
      --failing_finds_;
      co_return std::unexpected(Error{.code = "InternalServerError", .message = "scripted"});
    }
    const auto it = records_.find(body_sha256);
    if (it == records_.end()) co_return std::nullopt;
    co_return it->second;
  }

  void fail_puts(int count) {
    MutexLock lock(mutex_);
    failing_puts_ = count;
  }
  void fail_finds(int count) {
    MutexLock lock(mutex_);
    failing_finds_ = count;
  }
  [[nodiscard]] std::vector<consumer::QuarantineRecord> puts() const {
    MutexLock lock(mutex_);
    return puts_;
  }
  [[nodiscard]] int finds() const {
    MutexLock lock(mutex_);
    return finds_;
  }

 private:
  mutable Mutex mutex_;
  std::map<std::string, consumer::QuarantineRecord, std::less<>> records_ GUARDED_BY(mutex_);
  std::vector<consumer::QuarantineRecord> puts_ GUARDED_BY(mutex_);
  int failing_puts_ GUARDED_BY(mutex_) = 0;
  int failing_finds_ GUARDED_BY(mutex_) = 0;
  int finds_ GUARDED_BY(mutex_) = 0;
};

}  // namespace ic::testing
