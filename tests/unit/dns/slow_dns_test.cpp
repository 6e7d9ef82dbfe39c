// DNS that never answers holds up nothing (docs/design.md §4, "Stalls"): libcurl's threaded
// resolver would join its lookup thread when a transfer ends mid-lookup, on the loop, for the
// rest of the lookup. Here the lookup never ends until the test says so: a transfer whose
// connect timeout passes ends anyway, and another transfer of the same loop answers, both while
// the lookup is still waiting.
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "event/event_loop.hpp"
#include "http/curl_transport.hpp"
#include "silent_resolver.hpp"
#include "testing/local_http_server.hpp"

namespace ic::http {
namespace {

using namespace std::chrono_literals;
using ic::testing::LocalHttpServer;

struct ReleaseLookups {
  ~ReleaseLookups() { testing::release_silent_lookups(); }
};

TEST(SlowDns, ALookupThatNeverAnswersHoldsUpNeitherItsTransferNorAnother) {
  const ReleaseLookups release;  // whatever happens, the resolver threads end with the test
  LocalHttpServer server([](LocalHttpServer::Routes& s) {
    s.Get("/slow", [](const httplib::Request&, httplib::Response& response) {
      std::this_thread::sleep_for(300ms);  // still in flight when the other one times out
      response.set_content("ok", "text/plain");
    });
  });
  CurlTransport transport;
  event::EventLoop loop;
  std::optional<HttpResult> unresolved;
  std::optional<HttpResult> other;
  int waiting_when_unresolved_ended = -1;
  int waiting_when_other_answered = -1;
  auto lookup = [&]() -> Task<void> {
    const HttpRequest request{.method = "GET",
                              .url = "http://" + std::string(testing::kSilentHost) + ":8080/"};
    unresolved = co_await transport.send(request, {.connect = 100ms, .total = 1s});
    waiting_when_unresolved_ended = testing::silent_lookups_waiting();
  };
  auto answer = [&]() -> Task<void> {
    const HttpRequest request{.method = "GET", .url = server.url("/slow")};
    other = co_await transport.send(request, {.connect = 1s, .total = 5s});
    waiting_when_other_answered = testing::silent_lookups_waiting();
  };
  loop.post([&] {
    spawn(lookup());
    spawn(answer());
  });
  loop.run_until([&] { return unresolved.has_value() && other.has_value(); });

  ASSERT_EQ(testing::silent_lookups_started(), 1);
  ASSERT_FALSE(*unresolved);
  EXPECT_EQ(unresolved->error().failure, TransportFailure::TimeoutBeforeSend)
      << unresolved->error().detail;
  EXPECT_EQ(waiting_when_unresolved_ended, 1) << "the transfer waited for the lookup to end";
  ASSERT_TRUE(*other) << other->error().detail;
  EXPECT_EQ((*other)->body, "ok");
  EXPECT_EQ(waiting_when_other_answered, 1) << "the loop waited for the lookup to end";
}

}  // namespace
}  // namespace ic::http
