// Compiler-checked locking: clang's thread-safety analysis (-Wthread-safety, on in the clang
// preset) checks at compile time that a member declared GUARDED_BY(mu) is only touched with mu
// held and that a function declared REQUIRES(mu) is only called with mu held. The macros are
// those of clang's documentation; they expand to nothing on other compilers. ic::Mutex and
// ic::MutexLock are std::mutex and a scoped lock that carry the annotations.
//
//   class Counter {
//    public:
//     void add(int n) { MutexLock lock(mu_); total_ += n; }
//    private:
//     Mutex mu_;
//     int total_ GUARDED_BY(mu_) = 0;
//   };
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <utility>

#if defined(__clang__)
#define IC_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define IC_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) IC_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY IC_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) IC_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) IC_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) IC_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) IC_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) IC_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) IC_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) IC_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) IC_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) IC_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define EXCLUDES(...) IC_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS IC_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace ic {

// std::mutex as a capability. Lock it through MutexLock; lock()/unlock() make it a
// BasicLockable for CondVar.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }

 private:
  std::mutex mutex_;
};

// Holds `mu` for its scope, like std::unique_lock: unlock() and lock() let a loop drop the
// mutex around slow work (the analysis tracks both), and the destructor unlocks only if held.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }
  void unlock() RELEASE() {
    mu_.unlock();
    held_ = false;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// std::shared_mutex as a capability: readers hold it shared (ReaderLock), writers exclusively
// (WriterLock); REQUIRES_SHARED(mu) lets a function read what mu guards.
class CAPABILITY("shared mutex") SharedMutex {
 public:
  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mutex_.unlock_shared(); }

 private:
  std::shared_mutex mutex_;
};

class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() RELEASE_GENERIC() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterLock() RELEASE() { mu_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mu_;
};

// A condition variable for ic::Mutex: std::condition_variable_any over the Mutex itself, so
// the waits need no access to the std::mutex inside (the price, one more internal lock per wait
// and notify, is nothing next to a queue round trip). Every wait requires `mu` held; it
// releases mu while blocked and holds it again when it returns, so to the analysis the caller
// holds mu throughout.
//
// Predicates run with mu held, but the analysis cannot see that from inside the standard
// library, so a predicate that reads guarded state says so itself:
//   changed_.wait(mutex_, [this]() REQUIRES(mutex_) { return stop_requested_; });
// Without the annotation its body fails the analysis; what stays unchecked is only that the
// mutex it names is the one passed beside it.
class CondVar {
 public:
  void wait(Mutex& mu) REQUIRES(mu) { cv_.wait(mu); }
  template <class Predicate>
  void wait(Mutex& mu, Predicate ready) REQUIRES(mu) {
    cv_.wait(mu, std::move(ready));
  }
  template <class Clock, class Duration>
  std::cv_status wait_until(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline)
      REQUIRES(mu) {
    return cv_.wait_until(mu, deadline);
  }
  template <class Rep, class Period>
  std::cv_status wait_for(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout)
      REQUIRES(mu) {
    return cv_.wait_for(mu, timeout);
  }
  // Returns ready(): false when the timeout passed with the predicate still false.
  template <class Rep, class Period, class Predicate>
  bool wait_for(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout, Predicate ready)
      REQUIRES(mu) {
    return cv_.wait_for(mu, timeout, std::move(ready));
  }

  void notify_one() noexcept { cv_.notify_one(); }
  void notify_all() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

}  // namespace ic
