// list over a fake operator store: the stale-claims Scan's cut-off, one line per record with
// ISO-8601 times, and --fail-if-any's exit 6 for the scheduled check (issue 24).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "application/operations/commands.hpp"
#include "testing/clocks.hpp"
#include "testing/string_console.hpp"

namespace ic::application {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

using ic::testing::StringConsole;

// Answers the Scan with the IN_PROGRESS records whose lease ended before the cut-off.
class StaleClaims final : public idempotency::OperatorStore {
 public:
  std::vector<idempotency::ClaimRecord> records;
  Instant asked_before{};

  std::expected<idempotency::OperatorWrite, Error> reopen(
      const idempotency::ReopenRequest&) override {
    return std::unexpected(Error{});
  }
  std::expected<idempotency::OperatorWrite, Error> amend(
      const idempotency::AmendRequest&) override {
    return std::unexpected(Error{});
  }
  std::expected<idempotency::OperatorWrite, Error> settle(
      const idempotency::SettleRequest&) override {
    return std::unexpected(Error{});
  }
  std::expected<idempotency::RecordPage, Error> needing_attention(std::string_view, Instant,
                                                                  std::string_view) override {
    return idempotency::RecordPage{};
  }
  std::expected<idempotency::RecordPage, Error> stale_in_progress(Instant stale_before,
                                                                  std::string_view, int) override {
    asked_before = stale_before;
    idempotency::RecordPage page;
    for (const auto& r : records) {
      if (r.lease_until < stale_before) page.records.push_back(r);
    }
    return page;
  }
};

class ListTest : public ::testing::Test {
 protected:
  testing::ManualClock clock_{Instant{Millis{1'764'460'800'000}}};  // 2025-11-30T00:00:00Z
  StaleClaims store_;
  StringConsole console_;

  int run(bool fail_if_any) {
    return list(store_, clock_, console_,
                {.status = "IN_PROGRESS",
                 .lease = 60s,
                 .older_than_leases = 5,
                 .fail_if_any = fail_if_any});
  }
};

TEST_F(ListTest, NoStaleClaimIsExitZeroEvenWithFailIfAny) {
  store_.records = {{.key = "CHG-live", .lease_until = clock_.now() - 1min}};
  EXPECT_EQ(run(true), 0);
  EXPECT_EQ(store_.asked_before, clock_.now() - 5min) << "5 leases of 60 s";
  EXPECT_EQ(nlohmann::json::parse(console_.results.back())["count"], 0);
}

TEST_F(ListTest, AStaleClaimIsListedAndFailIfAnyExitsSix) {
  store_.records = {{.key = "CHG-crashed",
                     .lease_until = clock_.now() - 1h,
                     .owner = "pod-7",
                     .updated_at = clock_.now() - 61min}};
  EXPECT_EQ(run(false), 0) << "an operator's plain list is not a failure";
  EXPECT_EQ(run(true), kFoundExit);
  const auto line = nlohmann::json::parse(console_.results.front());
  EXPECT_EQ(line["chargeId"], "CHG-crashed");
  EXPECT_EQ(line["owner"], "pod-7");
  EXPECT_EQ(line["leaseUntil"], "2025-11-29T23:00:00.000Z");
  EXPECT_THAT(console_.notes.back(), HasSubstr("1 IN_PROGRESS record(s) found"));
}

}  // namespace
}  // namespace ic::application
