// redrive's run over the dead-letter port, without SQS: what moves and what is handed back,
// that a message leaves the DLQ only after its copy was accepted, the dry run, --max, and a
// failed send stopping the run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <nlohmann/json.hpp>

#include "application/operations/commands.hpp"
#include "core/sha256.hpp"
#include "event/run_blocking.hpp"
#include "testing/fakes.hpp"
#include "testing/in_memory_quarantine.hpp"
#include "testing/string_console.hpp"

namespace ic::application {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ic::testing::StringConsole;

// A DLQ that hands out its messages in order, each once per receive, and keeps what it is
// told to delete or make visible again.
class FakeDeadLetters final : public DeadLetterQueue {
 public:
  std::deque<consumer::Message> visible;
  std::vector<std::string> deleted;
  std::vector<std::string> handed_back;

  std::expected<std::size_t, Error> visible_depth() override { return visible.size(); }
  std::expected<std::vector<consumer::Message>, Error> receive(int max_messages,
                                                               std::chrono::seconds) override {
    std::vector<consumer::Message> out;
    while (!visible.empty() && out.size() < static_cast<std::size_t>(max_messages)) {
      out.push_back(visible.front());
      visible.pop_front();
    }
    return out;
  }
  std::expected<consumer::BatchResult, Error> delete_batch(
      std::span<const consumer::DeleteEntry> entries) override {
    for (const auto& entry : entries) deleted.push_back(entry.message_id);
    return consumer::BatchResult(entries.size());
  }
  std::expected<consumer::BatchResult, Error> change_visibility_batch(
      std::span<const consumer::VisibilityEntry> entries) override {
    for (const auto& entry : entries) handed_back.push_back(entry.message_id);
    return consumer::BatchResult(entries.size());
  }
};

class FakeSource final : public SourceQueue {
 public:
  std::vector<std::pair<std::string, consumer::MessageAttributes>> sent;
  int fail_from = -1;  // the send with this index and later ones fail

  std::expected<std::string, Error> send(std::string_view body,
                                         const consumer::MessageAttributes& attributes) override {
    if (fail_from >= 0 && static_cast<int>(sent.size()) >= fail_from) {
      return std::unexpected(Error{.code = "InternalError", .message = "try later"});
    }
    sent.emplace_back(std::string(body), attributes);
    return "copy-" + std::to_string(sent.size());
  }
};

consumer::Message dead(std::string id, std::string reason = "") {
  consumer::Message m{.message_id = id, .receipt_handle = "rh-" + id, .body = "body-" + id};
  m.message_attributes["traceparent"] = {"String", "00-" + id};
  if (!reason.empty()) {
    m.message_attributes["failureReason"] = {"String", std::move(reason)};
    m.message_attributes["chargeId"] = {"String", "CHG-" + id};
  }
  return m;
}

class RedriveTest : public ::testing::Test {
 protected:
  int run(const RedriveRequest& request) {
    return redrive(dlq_, source_, clock_, console_, request, &quarantine_);
  }
  // What the consumer does when no DLQ copy can carry the reason: the record, then the body
  // alone (no attributes at all).
  consumer::Message quarantined(std::string id, std::string reason) {
    consumer::Message m{.message_id = id, .receipt_handle = "rh-" + id, .body = "body-" + id};
    EXPECT_TRUE(event::run_blocking(quarantine_.put({.body_sha256 = sha256_hex(m.body),
                                                     .failure_reason = std::move(reason),
                                                     .source_message_id = "src-" + id})));
    return m;
  }

  FakeDeadLetters dlq_;
  testing::InMemoryQuarantine quarantine_;
  FakeSource source_;
  testing::ManualClock clock_;
  StringConsole console_;
};

TEST_F(RedriveTest, MovesWhatSqsDeadLetteredItselfWithItsProducerAttributesAndHandsBackTheRest) {
  dlq_.visible = {dead("m1"), dead("m2", "PAYLOAD_MISMATCH"), dead("m3")};
  EXPECT_EQ(run({}), 0);
  ASSERT_EQ(source_.sent.size(), 2u);
  EXPECT_EQ(source_.sent[0].first, "body-m1");
  EXPECT_EQ(source_.sent[0].second,
            (consumer::MessageAttributes{{"traceparent", {"String", "00-m1"}}}));
  EXPECT_THAT(dlq_.deleted, ElementsAre("m1", "m3"));
  EXPECT_THAT(dlq_.handed_back, ElementsAre("m2"));
  ASSERT_EQ(console_.results.size(), 2u);
  EXPECT_EQ(console_.result_json(0)["event"], "redrive summary");
  EXPECT_EQ(console_.result_json(0)["dlqDepthAtStart"], 3);
  EXPECT_EQ(console_.result_json(0)["byReason"]["PAYLOAD_MISMATCH"]["skipped"], 1);
  EXPECT_EQ(console_.result_json(1), nlohmann::json::parse(R"({"event":"redriven","messages":2})"));
}

TEST_F(RedriveTest, ADryRunListsWhatWouldMoveAndMovesNothing) {
  dlq_.visible = {dead("m1"), dead("m2", "PREVIOUSLY_FAILED")};
  EXPECT_EQ(run({.dry_run = true}), 0);
  EXPECT_THAT(source_.sent, IsEmpty());
  EXPECT_THAT(dlq_.deleted, IsEmpty());
  EXPECT_THAT(dlq_.handed_back, ElementsAre("m1", "m2"));
  ASSERT_EQ(console_.results.size(), 4u);
  EXPECT_EQ(console_.result_json(0)["event"], "would move");
  EXPECT_EQ(console_.result_json(1)["event"], "would skip");
  EXPECT_EQ(console_.result_json(1)["chargeId"], "CHG-m2");
  EXPECT_EQ(console_.result_json(2)["dryRun"], true);
  EXPECT_EQ(console_.result_json(2)["byReason"],
            nlohmann::json::parse(R"({"NONE":{"wouldMove":1,"wouldSkip":0,"returned":0},
                                      "PREVIOUSLY_FAILED":{"wouldMove":0,"wouldSkip":1,"returned":0}})"))
      << "a dry run moves nothing: its counts say what would";
  EXPECT_EQ(console_.result_json(3),
            nlohmann::json::parse(R"({"event":"would redrive","messages":1})"));
}

TEST_F(RedriveTest, MaxBoundsTheMessagesMovedAndTheRestIsHandedBack) {
  dlq_.visible = {dead("m1"), dead("m2"), dead("m3")};
  EXPECT_EQ(run({.max_messages = 2}), 0);
  EXPECT_THAT(dlq_.deleted, ElementsAre("m1", "m2"));
  EXPECT_THAT(dlq_.handed_back, ElementsAre("m3"));
}

TEST_F(RedriveTest, AFailedSendStopsTheRunAndTheMessageStaysInTheDlq) {
  dlq_.visible = {dead("m1"), dead("m2")};
  source_.fail_from = 1;
  EXPECT_EQ(run({}), 1);
  EXPECT_THAT(dlq_.deleted, ElementsAre("m1")) << "never deleted before its copy is accepted";
  EXPECT_THAT(dlq_.handed_back, ElementsAre("m2"));
  ASSERT_EQ(console_.notes.size(), 1u);
  EXPECT_THAT(console_.notes[0], HasSubstr("redrive: send of m2 failed: InternalError"));
  ASSERT_EQ(console_.results.size(), 1u) << "the summary, and no redriven line";
  EXPECT_EQ(console_.result_json(0)["event"], "redrive summary");
}

// A message without a failureReason whose reason the consumer quarantined is not one SQS
// dead-lettered itself: it stays unless its reason is asked for.
TEST_F(RedriveTest, AQuarantinedMessageStaysByDefaultUnderItsQuarantinedReason) {
  dlq_.visible = {quarantined("m1", "INVALID_MESSAGE"), dead("m2")};
  EXPECT_EQ(run({}), 0);
  ASSERT_EQ(source_.sent.size(), 1u);
  EXPECT_EQ(source_.sent[0].first, "body-m2");
  EXPECT_THAT(dlq_.handed_back, ElementsAre("m1"));
  EXPECT_EQ(console_.result_json(0)["byReason"]["INVALID_MESSAGE"]["skipped"], 1);
  EXPECT_EQ(console_.result_json(0)["byReason"]["NONE"]["moved"], 1);
  EXPECT_EQ(quarantine_.finds(), 2) << "one look-up per message without a reason";
}

TEST_F(RedriveTest, AQuarantinedMessageMovesWhenItsReasonIsAskedFor) {
  dlq_.visible = {quarantined("m1", "INVALID_MESSAGE")};
  EXPECT_EQ(run({.reasons = {"INVALID_MESSAGE"}}), 0);
  ASSERT_EQ(source_.sent.size(), 1u);
  EXPECT_THAT(dlq_.deleted, ElementsAre("m1"));
}

TEST_F(RedriveTest, ADryRunMarksAQuarantinedMessage) {
  dlq_.visible = {quarantined("m1", "INVALID_MESSAGE")};
  EXPECT_EQ(run({.dry_run = true}), 0);
  EXPECT_EQ(console_.result_json(0)["event"], "would skip");
  EXPECT_EQ(console_.result_json(0)["reason"], "INVALID_MESSAGE");
  EXPECT_EQ(console_.result_json(0)["quarantined"], true);
}

// Unread, the record might hold a reason: the message must not pass for one SQS dead-lettered.
TEST_F(RedriveTest, AFailedQuarantineLookUpStopsTheRunAndMovesNothing) {
  dlq_.visible = {dead("m1")};
  quarantine_.fail_finds(1);
  EXPECT_EQ(run({}), 1);
  EXPECT_THAT(source_.sent, IsEmpty());
  EXPECT_THAT(dlq_.handed_back, ElementsAre("m1"));
  ASSERT_EQ(console_.notes.size(), 1u);
  EXPECT_THAT(console_.notes[0], HasSubstr("quarantine record of m1 failed: InternalServerError"));
}

}  // namespace
}  // namespace ic::application
