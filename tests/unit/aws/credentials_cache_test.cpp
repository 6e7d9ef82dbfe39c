// The credentials cache: callers never wait for a fetch, one refresh in flight, refresh ahead
// of expiry, backoff after a failure (never a retry per call), static stability for IMDS and
// container credentials, the first-fetch wait of start-up. The clock is a ManualClock and the
// jitter fixed; where a real thread runs, latches order it and the test polls for a state with a
// deadline.
#include "aws/credentials/credentials_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>

#include "core/thread_annotations.hpp"
#include "testing/aws_env.hpp"
#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"

namespace ic::aws {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::system_clock::time_point;

const Instant kT0 = std::chrono::sys_days{std::chrono::year{2026} / 11 / 30};

Credentials keys(std::string id, std::optional<TimePoint> expiration = std::nullopt) {
  return {.access_key_id = std::move(id),
          .secret_access_key = std::string(testing::kSecretKey),
          .expiration = expiration};
}

std::unexpected<AwsError> endpoint_down() {
  return std::unexpected(AwsError{{.error_class = ErrorClass::Retryable,
                                   .code = "CredentialsFetchFailed",
                                   .message = "container credentials: connect timeout"}});
}

// Answers `next`; while closed, a fetch announces itself on `entered` and blocks until open().
class GatedProvider final : public CredentialsProvider {
 public:
  explicit GatedProvider(std::expected<Credentials, AwsError> next) : next_(std::move(next)) {}
  std::expected<Credentials, AwsError> credentials() override {
    ++calls;
    const int now_in = ++inside;
    max_inside = std::max(max_inside.load(), now_in);
    if (closed_) {
      entered.count_down();
      gate_.wait();
    }
    --inside;
    MutexLock lock(mutex_);
    return next_;
  }
  void set(std::expected<Credentials, AwsError> next) {
    MutexLock lock(mutex_);
    next_ = std::move(next);
  }
  void close() { closed_ = true; }
  void open() {
    closed_ = false;  // later fetches pass, and never count `entered` down again
    gate_.count_down();
  }

  std::atomic<int> calls{0};
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  std::latch entered{1};

 private:
  std::atomic<bool> closed_{false};
  std::latch gate_{1};
  Mutex mutex_;
  std::expected<Credentials, AwsError> next_ GUARDED_BY(mutex_);
};

class RecordingCredentialsObserver final : public CredentialsObserver {
 public:
  void on_refresh(const AwsError* failure, bool stale) noexcept override {
    (failure ? failures : successes) += 1;
    last_stale = stale;
  }
  std::atomic<int> successes{0};
  std::atomic<int> failures{0};
  std::atomic<bool> last_stale{false};
};

class CredentialsCacheTest : public ::testing::Test {
 protected:
  // A cache over one provider; `stable` marks it as IMDS and container are marked.
  CredentialsCache& build(std::expected<Credentials, AwsError> first, bool stable = false) {
    auto owned = std::make_unique<GatedProvider>(std::move(first));
    provider = owned.get();
    std::vector<NamedProvider> providers;
    providers.push_back({stable ? "imds" : "profile", std::move(owned), stable});
    cache = std::make_unique<CredentialsCache>(
        std::make_unique<CredentialsChain>(std::move(providers), clock), clock, random,
        CredentialsCacheConfig{}, &observer);
    return *cache;
  }
  // Keys valid for an hour, then the endpoint down for the refresh at `at`.
  CredentialsCache& fetched_then_down_at(Instant at, bool stable = false) {
    auto& c = build(keys("FIRST", kT0 + 1h), stable);
    EXPECT_TRUE(c.refresh_if_due());
    provider->set(endpoint_down());
    clock.set(at);
    EXPECT_TRUE(c.refresh_if_due());
    return c;
  }
  void poll_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "state not reached";
      std::this_thread::yield();
    }
  }

  testing::ManualClock clock{kT0};
  testing::FixedRandom random{1.0};  // equal jitter at its top: exactly base * 2^n
  RecordingCredentialsObserver observer;
  GatedProvider* provider = nullptr;
  std::unique_ptr<CredentialsCache> cache;
};

TEST_F(CredentialsCacheTest, BeforeTheFirstFetchCallersGetARetryableErrorAtOnce) {
  auto& c = build(keys("FIRST", kT0 + 1h));
  const auto answer = c.credentials();
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, kCredentialsUnavailable);
  EXPECT_EQ(answer.error().error_class, ErrorClass::Retryable);
  EXPECT_EQ(provider->calls, 0);  // the caller did not fetch
}

TEST_F(CredentialsCacheTest, CallersKeepTheCachedCredentialsWhileAFetchIsStuck) {
  auto& c = build(keys("FIRST", kT0 + 1h));
  ASSERT_TRUE(c.refresh_if_due());
  provider->set(keys("SECOND", kT0 + 2h));
  provider->close();
  clock.set(kT0 + 50min);  // refresh due
  std::thread refresher([&] { (void)c.refresh_if_due(); });
  provider->entered.wait();  // the refresh is now blocked inside the provider

  // Every caller answers from the cache without waiting for the stuck fetch; none starts
  // another one.
  std::vector<std::thread> callers;
  std::atomic<int> first{0};
  std::atomic<int> started{0};
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        first += c.credentials()->access_key_id == "FIRST" ? 1 : 0;
        started += c.refresh_if_due() ? 1 : 0;
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(first, 800);
  EXPECT_EQ(started, 0);
  EXPECT_EQ(provider->calls, 2);
  EXPECT_EQ(provider->max_inside, 1);

  provider->open();
  refresher.join();
  EXPECT_EQ(c.credentials()->access_key_id, "SECOND");
}

TEST_F(CredentialsCacheTest, TheRefresherThreadRefreshesAheadOfExpiryWhenACallerFindsItDue) {
  auto& c = build(keys("FIRST", kT0 + 1h));
  c.start();
  ASSERT_EQ(c.wait_for_first_refresh(10s)->access_key_id, "FIRST");
  provider->set(keys("SECOND", kT0 + 2h));
  clock.set(kT0 + 45min - 1s);
  EXPECT_EQ(c.credentials()->access_key_id, "FIRST");
  EXPECT_EQ(provider->calls, 1);
  clock.set(kT0 + 45min);                              // 15 minutes before expiry
  EXPECT_EQ(c.credentials()->access_key_id, "FIRST");  // wakes the refresher, does not wait
  poll_until([&] { return c.status().refreshes == 2; });
  EXPECT_EQ(c.credentials()->access_key_id, "SECOND");
  c.stop();
  EXPECT_EQ(provider->calls, 2);
}

TEST_F(CredentialsCacheTest, CredentialsWithoutExpiryAreFetchedOnce) {
  auto& c = build(keys("STATIC"));
  ASSERT_TRUE(c.refresh_if_due());
  for (int i = 0; i < 10; ++i) {
    clock.advance(24h);
    EXPECT_FALSE(c.refresh_if_due());
    ASSERT_EQ(c.credentials()->access_key_id, "STATIC");
  }
  EXPECT_EQ(provider->calls, 1);
}

TEST_F(CredentialsCacheTest, ShortLivedCredentialsRefreshAtHalfTheirLife) {
  auto& c = build(keys("SHORT", kT0 + 70s));  // the container endpoint of issue 34
  ASSERT_TRUE(c.refresh_if_due());
  clock.set(kT0 + 35s - 1ms);
  EXPECT_FALSE(c.refresh_if_due());
  clock.set(kT0 + 35s);
  EXPECT_TRUE(c.refresh_if_due());
  EXPECT_EQ(provider->calls, 2);
}

TEST_F(CredentialsCacheTest, AFailedRefreshBacksOffInsteadOfRetryingPerCall) {
  auto& c = fetched_then_down_at(kT0 + 45min);
  EXPECT_EQ(observer.failures, 1);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(c.credentials()->access_key_id, "FIRST");  // still valid: served
    ASSERT_FALSE(c.refresh_if_due());                    // and not retried per call
  }
  EXPECT_EQ(provider->calls, 2);
  EXPECT_EQ(c.status().last_failure->code, "CredentialsFetchFailed");

  // 1 s, 2 s, 4 s, ... (the jitter pinned at its top), capped at a minute.
  for (const auto delay : {1s, 2s, 4s, 8s, 16s, 32s, 60s, 60s}) {
    clock.advance(delay - 1ms);
    EXPECT_FALSE(c.refresh_if_due()) << delay.count();
    clock.advance(1ms);
    EXPECT_TRUE(c.refresh_if_due()) << delay.count();
  }
  EXPECT_EQ(provider->calls, 10);

  provider->set(keys("SECOND", kT0 + 2h));
  clock.advance(1min);
  ASSERT_TRUE(c.refresh_if_due());
  EXPECT_EQ(c.credentials()->access_key_id, "SECOND");
  EXPECT_FALSE(c.status().last_failure.has_value());
  EXPECT_EQ(observer.successes, 2);
}

TEST_F(CredentialsCacheTest, ExpiredCredentialsAreNotServedAndTheErrorCarriesTheLastFailure) {
  auto& c = fetched_then_down_at(kT0 + 59min);
  clock.set(kT0 + 1h - 5s);  // inside the expiry margin: a signed request could arrive late
  const auto answer = c.credentials();
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, "CredentialsFetchFailed");
  EXPECT_EQ(answer.error().error_class, ErrorClass::Retryable);
  EXPECT_NE(answer.error().message.find("connect timeout"), std::string::npos);
  EXPECT_FALSE(c.status().usable);
  testing::expect_no_secret(answer.error());
}

TEST_F(CredentialsCacheTest, StaticStabilityServesExpiredImdsCredentialsWhileRefreshesFail) {
  auto& c = fetched_then_down_at(kT0 + 1h + 10min, /*stable=*/true);  // expired, endpoint down
  EXPECT_TRUE(observer.last_stale);
  EXPECT_EQ(c.credentials()->access_key_id, "FIRST");
  const auto status = c.status();
  EXPECT_TRUE(status.usable);
  EXPECT_TRUE(status.stale);
  EXPECT_EQ(status.last_failure->code, "CredentialsFetchFailed");

  provider->set(keys("SECOND", kT0 + 3h));
  clock.advance(1s);
  ASSERT_TRUE(c.refresh_if_due());
  EXPECT_EQ(c.credentials()->access_key_id, "SECOND");
  EXPECT_FALSE(c.status().stale);
}

TEST_F(CredentialsCacheTest, TheFirstFetchWaitIsBounded) {
  auto& c = build(keys("FIRST", kT0 + 1h));
  provider->close();
  c.start();
  provider->entered.wait();
  const auto answer = c.wait_for_first_refresh(10ms);  // the fetch is stuck: give up
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, kCredentialsUnavailable);
  provider->open();
  poll_until([&] { return c.status().usable; });
  c.stop();
}

TEST_F(CredentialsCacheTest, AProviderThatThrowsIsAFailedRefreshNotAStuckOne) {
  class Throwing final : public CredentialsProvider {
   public:
    std::expected<Credentials, AwsError> credentials() override {
      throw std::runtime_error("boom");
    }
  };
  std::vector<NamedProvider> providers;
  providers.push_back({"profile", std::make_unique<Throwing>()});
  CredentialsCache c(std::make_unique<CredentialsChain>(std::move(providers), clock), clock,
                     random);
  ASSERT_TRUE(c.refresh_if_due());
  clock.advance(1s);
  EXPECT_TRUE(c.refresh_if_due());  // not left in flight
  EXPECT_EQ(c.credentials().error().code, "CredentialsFetchFailed");
}

}  // namespace
}  // namespace ic::aws
