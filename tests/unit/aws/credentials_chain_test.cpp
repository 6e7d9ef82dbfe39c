// The provider chain: SDK order, sticky provider, static stability marks, errors. Caching and
// refresh are the cache's (credentials_cache_test.cpp).
#include "aws/credentials/credentials_chain.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "aws/credentials/credentials_cache.hpp"
#include "core/thread_annotations.hpp"
#include "http/curl_transport.hpp"
#include "testing/aws_env.hpp"
#include "testing/clocks.hpp"
#include "testing/fake_imds.hpp"
#include "testing/fixed_random.hpp"

namespace ic::aws {
namespace {

using namespace std::chrono_literals;
using testing::expect_no_secret;
using testing::FakeEnv;
using testing::FakeImds;
using testing::kSecretKey;
using testing::lookup;
using testing::ScratchDir;
using TimePoint = std::chrono::system_clock::time_point;

const Instant kStart = std::chrono::sys_days{std::chrono::year{2026} / 11 / 30};

// Answers with whatever `next` holds, counting calls.
class ScriptedProvider final : public CredentialsProvider {
 public:
  explicit ScriptedProvider(std::expected<Credentials, AwsError> next) : next_(std::move(next)) {}
  std::expected<Credentials, AwsError> credentials() override {
    ++calls;
    MutexLock lock(mutex_);
    return next_;
  }
  void set(std::expected<Credentials, AwsError> next) {
    MutexLock lock(mutex_);
    next_ = std::move(next);
  }
  std::atomic<int> calls{0};

 private:
  Mutex mutex_;
  std::expected<Credentials, AwsError> next_ GUARDED_BY(mutex_);
};

Credentials creds(std::string id, std::optional<TimePoint> expiration = std::nullopt) {
  return {.access_key_id = std::move(id),
          .secret_access_key = std::string(kSecretKey),
          .expiration = expiration};
}

std::unexpected<AwsError> not_found() {
  return std::unexpected(AwsError{{.error_class = ErrorClass::Permanent,
                                   .code = "CredentialsNotFound",
                                   .message = "not here"}});
}

std::unexpected<AwsError> unavailable() {
  return std::unexpected(AwsError{{.error_class = ErrorClass::Retryable,
                                   .code = "CredentialsFetchFailed",
                                   .message = "HTTP 503"}});
}

class ChainTest : public ::testing::Test {
 protected:
  ScriptedProvider* add(std::string name, std::expected<Credentials, AwsError> next) {
    auto provider = std::make_unique<ScriptedProvider>(std::move(next));
    auto* raw = provider.get();
    providers.push_back({std::move(name), std::move(provider)});
    return raw;
  }
  CredentialsChain build() { return CredentialsChain(std::move(providers), clock); }

  testing::ManualClock clock{kStart};
  std::vector<NamedProvider> providers;
};

TEST_F(ChainTest, FirstProviderThatAnswersWinsAndIsRemembered) {
  auto* first = add("first", not_found());
  auto* second = add("second", creds("SECOND", kStart + 1h));
  auto* third = add("third", creds("THIRD"));
  auto chain = build();

  const auto answer = chain.credentials();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->access_key_id, "SECOND");
  EXPECT_EQ(chain.active_provider(), "second");
  EXPECT_EQ(third->calls, 0);

  // Later the first provider could answer, but the chain sticks with the one that did.
  first->set(creds("FIRST"));
  second->set(creds("SECOND-REFRESHED", kStart + 2h));
  EXPECT_EQ(chain.credentials()->access_key_id, "SECOND-REFRESHED");
  EXPECT_EQ(first->calls, 1);
  EXPECT_EQ(second->calls, 2);
}

TEST_F(ChainTest, EveryCallFetchesTheCacheDoesTheCaching) {
  auto* only = add("static", creds("STATIC", kStart + 1h));
  auto chain = build();
  ASSERT_TRUE(chain.credentials().has_value());
  ASSERT_TRUE(chain.credentials().has_value());
  EXPECT_EQ(only->calls, 2);
}

TEST_F(ChainTest, AlreadyExpiredCredentialsAreAnError) {
  add("broken", creds("OLD", kStart - 1s));
  auto chain = build();
  const auto answer = chain.credentials();
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, "InvalidCredentials");
  expect_no_secret(answer.error());
}

TEST_F(ChainTest, NoProviderAnsweringListsEveryReason) {
  add("environment", not_found());
  add("imds", unavailable());
  auto chain = build();
  const auto answer = chain.credentials();
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, "CredentialsNotFound");
  EXPECT_EQ(answer.error().error_class, ErrorClass::Retryable);  // imds may come back
  EXPECT_NE(answer.error().message.find("[environment] not here"), std::string::npos);
  EXPECT_NE(answer.error().message.find("[imds] HTTP 503"), std::string::npos);
  EXPECT_EQ(chain.active_provider(), std::nullopt);
}

TEST_F(ChainTest, AConfiguredProviderThatFailedLeadsTheReasons) {
  add("environment", not_found());
  add("web-identity", unavailable());
  add("imds", not_found());
  auto chain = build();
  EXPECT_EQ(chain.credentials().error().message,
            "no credentials provider answered: [web-identity] HTTP 503; [environment] not here; "
            "[imds] not here;");
}

TEST_F(ChainTest, OnlyPermanentFailuresArePermanent) {
  add("environment", not_found());
  auto chain = build();
  EXPECT_EQ(chain.credentials().error().error_class, ErrorClass::Permanent);
}

// The real providers in the SDK order, each switched on by the fake environment.
class DefaultChainTest : public ::testing::Test {
 protected:
  std::unique_ptr<CredentialsChain> chain() {
    return make_default_credentials_chain(lookup(env), transport, clock);
  }
  void with_profile() {
    dir.write(".aws/credentials",
              "[default]\naws_access_key_id=PROFILE\naws_secret_access_key=p\n");
  }
  void with_environment() {
    env["AWS_ACCESS_KEY_ID"] = "ENVIRONMENT";
    env["AWS_SECRET_ACCESS_KEY"] = "e";
  }
  void with_container() {
    agent.routes().Get("/creds", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"AccessKeyId":"CONTAINER","SecretAccessKey":"c","Token":"t",)"
                      R"("Expiration":"2026-11-30T06:00:00Z"})",
                      "application/json");
    });
    // Idle connections stay with the test thread's loop: stopping must not wait them out.
    agent.close_connections_after_each_request();
    agent.start();
    env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = agent.url() + "/creds";
  }

  testing::ManualClock clock{kStart};
  ScratchDir dir;
  FakeImds imds{"2026-11-30T01:00:00Z"};
  testing::LocalHttpServer agent;
  http::CurlTransport curl;
  http::BlockingTransport transport{curl};
  FakeEnv env{{"HOME", dir.path()}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}};
};

TEST_F(DefaultChainTest, EnvironmentFirst) {
  with_environment();
  with_profile();
  with_container();
  auto c = chain();
  EXPECT_EQ(c->credentials()->access_key_id, "ENVIRONMENT");
  EXPECT_EQ(c->active_provider(), "environment");
  EXPECT_FALSE(c->active_static_stability());  // static keys: nothing to be stable about
}

TEST_F(DefaultChainTest, ProfileBeforeContainer) {
  with_profile();
  with_container();
  auto c = chain();
  EXPECT_EQ(c->credentials()->access_key_id, "PROFILE");
  EXPECT_TRUE(agent.requests().empty());
}

TEST_F(DefaultChainTest, ContainerBeforeImds) {
  with_container();
  auto c = chain();
  EXPECT_EQ(c->credentials()->access_key_id, "CONTAINER");
  EXPECT_EQ(c->active_provider(), "container");
  EXPECT_TRUE(c->active_static_stability());
  EXPECT_TRUE(imds.requests().empty());
}

TEST_F(DefaultChainTest, ImdsLastAndRefreshedOverTheNetwork) {
  testing::FixedRandom random{1.0};
  CredentialsCache cache(chain(), clock, random);
  ASSERT_TRUE(cache.refresh_if_due());
  EXPECT_EQ(cache.credentials()->access_key_id, "ASIAIMDS1");
  EXPECT_EQ(cache.active_provider(), "imds");
  clock.set(kStart + 30min);
  EXPECT_FALSE(cache.refresh_if_due());
  EXPECT_EQ(cache.credentials()->access_key_id, "ASIAIMDS1");  // cached
  EXPECT_EQ(imds.served(), 1);
  clock.set(kStart + 45min);
  EXPECT_TRUE(cache.refresh_if_due());  // 15 minutes early, in the background
  EXPECT_EQ(cache.credentials()->access_key_id, "ASIAIMDS2");
  EXPECT_EQ(imds.served(), 2);
}

TEST_F(DefaultChainTest, NothingConfiguredNamesEveryProvider) {
  env["AWS_EC2_METADATA_DISABLED"] = "true";
  const auto answer = chain()->credentials();
  ASSERT_FALSE(answer.has_value());
  for (const auto* name : {"[environment]", "[profile]", "[container]", "[imds]"}) {
    EXPECT_NE(answer.error().message.find(name), std::string::npos) << answer.error().message;
  }
}

}  // namespace
}  // namespace ic::aws
