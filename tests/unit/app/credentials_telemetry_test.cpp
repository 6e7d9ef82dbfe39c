// What the credentials cache shows an operator: ic_credentials_expiry_seconds and
// ic_credentials_refreshes_total{result}, a rate-limited warning while refreshes fail, and the
// `credentials` readiness check with its reason.
#include "app/telemetry/credentials_telemetry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "app/health.hpp"
#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

// Answers what the test set: keys that expire at `expiration`, or a failure.
class SwitchableProvider final : public aws::CredentialsProvider {
 public:
  std::expected<aws::Credentials, aws::AwsError> credentials() override {
    if (down) {
      return std::unexpected(aws::AwsError{{.error_class = ErrorClass::Retryable,
                                            .code = "CredentialsFetchFailed",
                                            .message = "instance metadata (IMDSv2): HTTP 503"}});
    }
    return aws::Credentials{.access_key_id = "AKID",
                            .secret_access_key = "s",
                            .expiration = std::chrono::system_clock::time_point(expiration)};
  }
  std::atomic<bool> down{false};
  Instant expiration;
};

class CredentialsTelemetryTest : public ::testing::Test {
 protected:
  aws::CredentialsCache& cache(bool stable) {
    auto owned = std::make_unique<SwitchableProvider>();
    provider_ = owned.get();
    provider_->expiration = testing::t0 + 1h;
    std::vector<aws::NamedProvider> providers;
    providers.push_back({stable ? "imds" : "profile", std::move(owned), stable});
    cache_ = std::make_unique<aws::CredentialsCache>(
        std::make_unique<aws::CredentialsChain>(std::move(providers), clock_), clock_, random_,
        aws::CredentialsCacheConfig{}, &telemetry_);
    telemetry_.attach(*cache_);
    return *cache_;
  }
  // What the logger's writer has written so far (it writes on its own thread).
  [[nodiscard]] std::string logged() {
    EXPECT_TRUE(log_.flush(10s));
    return out_.str();
  }
  [[nodiscard]] int warnings() {
    std::istringstream lines(logged());
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      n += line.find("AWS credentials refresh failed") != std::string::npos ? 1 : 0;
    }
    return n;
  }

  std::ostringstream out_;
  observability::Logger log_{*observability::parse_log_level("debug"),
                             observability::ostream_sink(out_)};
  observability::MetricsRegistry metrics_;
  CredentialsTelemetry telemetry_{log_, metrics_};
  testing::ManualClock clock_{testing::t0};
  testing::FixedRandom random_{1.0};
  SwitchableProvider* provider_ = nullptr;
  std::unique_ptr<aws::CredentialsCache> cache_;
};

TEST_F(CredentialsTelemetryTest, ExpiryGaugeCountsDownAndRefreshesAreCountedByResult) {
  auto& c = cache(false);
  EXPECT_THAT(metrics_.render(), Not(HasSubstr("ic_credentials_expiry_seconds")));  // none yet
  ASSERT_TRUE(c.refresh_if_due());
  EXPECT_THAT(metrics_.render(), HasSubstr("\nic_credentials_expiry_seconds 3600.000\n"));
  clock_.advance(50min);
  EXPECT_THAT(metrics_.render(), HasSubstr("\nic_credentials_expiry_seconds 600.000\n"));

  provider_->down = true;
  ASSERT_TRUE(c.refresh_if_due());
  clock_.advance(1s);
  ASSERT_TRUE(c.refresh_if_due());
  const auto text = metrics_.render();
  EXPECT_THAT(text, HasSubstr("ic_credentials_refreshes_total{result=\"success\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("ic_credentials_refreshes_total{result=\"failure\"} 2\n"));
  EXPECT_EQ(warnings(), 1);  // the second failure within the window is held back
  EXPECT_THAT(logged(), HasSubstr("instance metadata (IMDSv2): HTTP 503"));

  provider_->down = false;
  provider_->expiration = testing::t0 + 2h;
  clock_.advance(2s);
  ASSERT_TRUE(c.refresh_if_due());
  EXPECT_THAT(logged(), HasSubstr("AWS credentials refreshed again"));
  EXPECT_THAT(metrics_.render(), HasSubstr("\nic_credentials_expiry_seconds 4197.000\n"));
}

TEST_F(CredentialsTelemetryTest, ReadinessFailsWithTheReasonWhenNoValidCredentialsRemain) {
  auto& c = cache(false);
  auto ready = credentials_readiness(c.status());
  EXPECT_FALSE(ready.ok);
  EXPECT_EQ(ready.code, aws::kCredentialsUnavailable);
  EXPECT_EQ(ready.detail, "not fetched yet");

  ASSERT_TRUE(c.refresh_if_due());
  EXPECT_TRUE(credentials_readiness(c.status()).ok);

  provider_->down = true;
  clock_.set(testing::t0 + 1h);
  ASSERT_TRUE(c.refresh_if_due());
  ready = credentials_readiness(c.status());
  EXPECT_FALSE(ready.ok);
  EXPECT_EQ(ready.code, "CredentialsFetchFailed");
  EXPECT_EQ(ready.detail, "instance metadata (IMDSv2): HTTP 503");
  EXPECT_THAT(metrics_.render(), HasSubstr("\nic_credentials_expiry_seconds 0.000\n"));
}

TEST_F(CredentialsTelemetryTest, ExpiredImdsCredentialsServedUnderStaticStabilityStayReady) {
  auto& c = cache(true);
  ASSERT_TRUE(c.refresh_if_due());
  provider_->down = true;
  clock_.set(testing::t0 + 1h + 30s);
  ASSERT_TRUE(c.refresh_if_due());
  const auto ready = credentials_readiness(c.status());
  EXPECT_TRUE(ready.ok);
  EXPECT_EQ(ready.detail, "expired, served while the endpoint is unreachable");
  EXPECT_THAT(metrics_.render(), HasSubstr("\nic_credentials_expiry_seconds -30.000\n"));
  EXPECT_THAT(logged(), HasSubstr("\"servingExpired\":true"));
}

}  // namespace
}  // namespace ic::app
