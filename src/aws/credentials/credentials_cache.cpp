// Background refresh of the cached credentials.
#include "aws/credentials/credentials_cache.hpp"

#include <algorithm>

#include "core/backoff.hpp"

namespace ic::aws {

CredentialsCache::CredentialsCache(std::unique_ptr<CredentialsChain> chain, const Clock& clock,
                                   Random& random, CredentialsCacheConfig config,
                                   CredentialsObserver* observer,
                                   ThreadFailureObserver* thread_observer)
    : chain_(std::move(chain)),
      clock_(clock),
      random_(random),
      config_(config),
      observer_(observer),
      thread_observer_(thread_observer) {}

CredentialsCache::~CredentialsCache() {
  stop();
}

bool CredentialsCache::usable(Instant now) const {
  if (!cached_) return false;
  if (!cached_->expiration || static_stability_) return true;
  return now + config_.expiry_margin < *cached_->expiration;
}

std::expected<Credentials, AwsError> CredentialsCache::credentials() {
  MutexLock lock(mutex_);
  const Instant now = clock_.now();
  if (!in_flight_ && now >= next_attempt_) {
    wake_ = true;
    changed_.notify_all();
  }
  if (usable(now)) return *cached_;
  if (last_failure_) return std::unexpected(*last_failure_);
  return std::unexpected(
      AwsError{{.error_class = ErrorClass::Retryable,
                .code = std::string(kCredentialsUnavailable),
                .message = cached_ ? "the cached credentials expired; a refresh is in progress"
                                   : "no credentials yet; the first refresh is in progress"}});
}

Instant CredentialsCache::refresh_at(const Credentials& fetched, Instant now) const {
  if (!fetched.expiration) return Instant::max();
  const auto expiration = std::chrono::time_point_cast<Millis>(*fetched.expiration);
  // Short-lived credentials (less than twice the window left) refresh at half their life, so
  // they are not re-fetched on every wake.
  return expiration - std::min<Millis>(config_.advisory, (expiration - now) / 2);
}

bool CredentialsCache::refresh_if_due() {
  {
    MutexLock lock(mutex_);
    wake_ = false;
    if (in_flight_ || clock_.now() < next_attempt_) return false;
    in_flight_ = true;
  }
  // The fetch runs without the mutex: callers copy the cached credentials meanwhile. A throw
  // must not leave the refresh in flight forever.
  std::expected<Credentials, AwsError> fetched =
      std::unexpected(AwsError{{.error_class = ErrorClass::Retryable,
                                .code = "CredentialsFetchFailed",
                                .message = "the credentials provider threw"}});
  run_guarded("credentials", thread_observer_, [&] { fetched = chain_->credentials(); });
  const bool stability = chain_->active_static_stability();
  const Instant now = clock_.now();
  std::optional<AwsError> failure;
  bool stale = false;
  bool stopping = false;
  {
    MutexLock lock(mutex_);
    stopping = stopping_;
    in_flight_ = false;
    ++refreshes_;
    if (fetched) {
      next_attempt_ = refresh_at(*fetched, now);
      cached_ = std::move(*fetched);
      static_stability_ = stability;
      last_failure_.reset();
      failures_ = 0;
    } else {
      failure = fetched.error();
      last_failure_ = fetched.error();
      next_attempt_ = now + backoff_delay(failures_++, config_.backoff_base, config_.backoff_cap,
                                          Jitter::Equal, random_);
      stale = cached_ && cached_->expiration && *cached_->expiration <= now && usable(now);
    }
    changed_.notify_all();
  }
  // A fetch cut short by the stop is no failure worth a warning.
  if (observer_ && !stopping) observer_->on_refresh(failure ? &*failure : nullptr, stale);
  return true;
}

void CredentialsCache::start() {
  if (thread_.joinable()) return;
  {
    MutexLock lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { run(); });
}

void CredentialsCache::stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

void CredentialsCache::run() {
  for (;;) {
    run_guarded("credentials", thread_observer_, [this] { (void)refresh_if_due(); });
    MutexLock lock(mutex_);
    // The poll bounds the wait: the clock is the wall clock, which may step, and a refresh
    // that falls due with no caller asking must still start.
    changed_.wait_for(mutex_, config_.poll,
                      [this]() REQUIRES(mutex_) { return wake_ || stopping_; });
    if (stopping_) return;
  }
}

std::expected<Credentials, AwsError> CredentialsCache::wait_for_first_refresh(Millis bound) {
  {
    MutexLock lock(mutex_);
    changed_.wait_for(mutex_, bound,
                      [this]() REQUIRES(mutex_) { return refreshes_ > 0 || stopping_; });
  }
  return credentials();
}

CredentialsStatus CredentialsCache::status() const {
  MutexLock lock(mutex_);
  const Instant now = clock_.now();
  CredentialsStatus out{.usable = usable(now),
                        .cached = cached_.has_value(),
                        .last_failure = last_failure_,
                        .refreshes = refreshes_};
  if (cached_ && cached_->expiration) {
    out.expiration = std::chrono::time_point_cast<Millis>(*cached_->expiration);
    out.stale = out.usable && *out.expiration <= now;
  }
  return out;
}

}  // namespace ic::aws
