// The credentials every signer uses: a cache over the provider chain that a thread of its own
// refreshes in the background, so that no caller -- the event loop above all -- ever waits for
// a fetch (a credential_process, an STS call, a metadata endpoint, a file read).
//
//   CredentialsCache cache(make_default_credentials_chain(env, blocking), real_clock(),
//                          real_random(), {}, &telemetry);
//   cache.start();                               // the first fetch begins at once
//   cache.wait_for_first_refresh(20s);           // start-up only, before the loop serves
//   JsonClient dynamodb(config, transport, cache, retry);
//
// Refresh: one in flight at a time, started `advisory` before expiry (half the remaining life
// for short-lived credentials), as botocore's advisory refresh and the Java SDK's prefetch.
// A failure is remembered and retried after a jittered exponential backoff, never per call.
// Callers get the cached credentials while they are valid; when none are, an immediate
// Retryable error that carries the last refresh failure (docs/design.md, Credentials). Static
// stability: credentials of a provider that allows it (IMDS, container) are served past their
// expiry while refreshes fail, as the SDKs do.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "aws/credentials/credentials.hpp"
#include "aws/credentials/credentials_chain.hpp"
#include "core/random.hpp"
#include "core/thread_annotations.hpp"
#include "core/thread_guard.hpp"
#include "core/time.hpp"

namespace ic::aws {

// The code of the error callers get when no valid credentials are cached.
inline constexpr std::string_view kCredentialsUnavailable = "CredentialsUnavailable";

struct CredentialsCacheConfig {
  // Refresh this long before expiry, or at half the remaining life if that is later.
  Millis advisory{std::chrono::minutes{15}};
  // Credentials closer than this to expiry are not handed out (a request signed with them
  // might arrive after they expired), unless static stability allows expired ones.
  Millis expiry_margin{std::chrono::seconds{5}};
  // Backoff after consecutive failed refreshes: equal jitter in [d/2, d], d = base * 2^n, capped.
  Millis backoff_base{std::chrono::seconds{1}};
  Millis backoff_cap{std::chrono::minutes{1}};
  // How often the refresher thread re-reads the clock while nothing wakes it.
  Millis poll{std::chrono::seconds{1}};
};

// What readiness and the expiry gauge read.
struct CredentialsStatus {
  bool usable = false;                   // credentials() answers credentials now
  bool stale = false;                    // ... past their expiry, under static stability
  std::optional<Instant> expiration;     // of the cached credentials; nullopt: none or no expiry
  bool cached = false;                   // any credentials were ever fetched
  std::optional<AwsError> last_failure;  // of the latest refresh, if it failed
  int refreshes = 0;                     // finished, successful or not
};

// Thread-safety: called on the refresher thread after each refresh; must not block or throw.
// Ownership: borrowed; outlives the cache.
class CredentialsObserver {
 public:
  virtual ~CredentialsObserver() = default;
  // `failure` is null after a success; `stale` says expired credentials are served meanwhile.
  virtual void on_refresh(const AwsError* failure, bool stale) noexcept = 0;
};

// Thread-safety: credentials(), status(), wait_for_first_refresh() from any thread;
// start()/stop() from the owner's. Ownership: owns the chain and the refresher thread (joined
// by stop() and the destructor); borrows clock, random and observers, which outlive it.
class CredentialsCache final : public CredentialsProvider {
 public:
  CredentialsCache(std::unique_ptr<CredentialsChain> chain, const Clock& clock, Random& random,
                   CredentialsCacheConfig config = {}, CredentialsObserver* observer = nullptr,
                   ThreadFailureObserver* thread_observer = nullptr);
  ~CredentialsCache() override;
  CredentialsCache(const CredentialsCache&) = delete;
  CredentialsCache& operator=(const CredentialsCache&) = delete;

  // Never waits for a fetch: the mutex is held only to copy. A refresh that falls due wakes
  // the refresher thread.
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

  // Starts the refresher thread (its first fetch at once). Idempotent.
  void start();
  // Joins the refresher after the fetch in progress, if any, ends. Idempotent.
  void stop();
  // Start-up and operator commands only (a thread that may block): waits until the first
  // refresh has finished or `bound` has passed (steady time), then answers as credentials().
  [[nodiscard]] std::expected<Credentials, AwsError> wait_for_first_refresh(Millis bound);

  // One refresh on the calling thread if one is due and none is in flight; true when it ran.
  // What the refresher thread does when it wakes; tests call it instead of start().
  bool refresh_if_due();

  [[nodiscard]] CredentialsStatus status() const;
  [[nodiscard]] std::optional<std::string> active_provider() const {
    return chain_->active_provider();
  }
  [[nodiscard]] const Clock& clock() const { return clock_; }

 private:
  [[nodiscard]] bool usable(Instant now) const REQUIRES(mutex_);
  [[nodiscard]] Instant refresh_at(const Credentials& fetched, Instant now) const;
  void run();

  std::unique_ptr<CredentialsChain> chain_;
  const Clock& clock_;
  Random& random_;
  const CredentialsCacheConfig config_;
  CredentialsObserver* const observer_;
  ThreadFailureObserver* const thread_observer_;

  mutable Mutex mutex_;
  CondVar changed_;  // a refresh finished, one fell due, or stop
  std::optional<Credentials> cached_ GUARDED_BY(mutex_);
  bool static_stability_ GUARDED_BY(mutex_) = false;  // of the provider that served cached_
  std::optional<AwsError> last_failure_ GUARDED_BY(mutex_);
  Instant next_attempt_ GUARDED_BY(mutex_){};  // the epoch: due at once
  int failures_ GUARDED_BY(mutex_) = 0;        // consecutive
  int refreshes_ GUARDED_BY(mutex_) = 0;
  bool in_flight_ GUARDED_BY(mutex_) = false;
  bool wake_ GUARDED_BY(mutex_) = false;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace ic::aws
