// The JSON-lines logger: line shape, level filtering, redaction, escaping of hostile values,
// and whole lines under concurrent logging.
#include "observability/json_log.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <latch>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "core/thread_annotations.hpp"
#include "core/trace_context.hpp"
#include "testing/clocks.hpp"

namespace ic::observability {
namespace {

using nlohmann::ordered_json;

// 2026-11-30T08:15:02.123456Z: sub-millisecond digits must be truncated, not rounded.
std::chrono::system_clock::time_point fixed_now() {
  using namespace std::chrono;
  return sys_days{year{2026} / 11 / 30} + 8h + 15min + 2s + 123456us;
}

const testing::ManualClock kFixedClock{std::chrono::floor<Millis>(fixed_now())};

// Generous: only a wedged writer would come near it.
constexpr Millis kWait{10'000};

// A sink call's text cut into its lines, each with its newline; a torn line stays torn.
void append_lines(std::vector<std::string>& lines, std::string_view text) {
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size() - 1) + 1;
    lines.emplace_back(text.substr(0, end));
    text.remove_prefix(end);
  }
}

// Collects what the logger's writer hands the sink; read it after flush().
struct Capture {
  std::vector<std::string> calls;  // each call's text
  std::vector<std::string> lines;  // the same, line by line
  LogSink sink() {
    return [this](std::string_view text) {
      calls.emplace_back(text);
      append_lines(lines, text);
    };
  }
  [[nodiscard]] ordered_json parsed(std::size_t i) const {
    return ordered_json::parse(lines.at(i));
  }
};

TEST(JsonLog, LineIsOneJsonObjectWithTimestampLevelMessageThenFieldsInOrder) {
  Capture out;
  Logger log{LogLevel::Debug, out.sink(), kFixedClock};
  log.info("claim decided", {{"chargeId", "CHG-1"},
                             {"fence", 3},
                             {"bytes", std::uint64_t{18'446'744'073'709'551'615ULL}},
                             {"seconds", 0.25},
                             {"final", true},
                             {"owner", std::string("host/42")}});

  ASSERT_TRUE(log.flush(kWait));
  ASSERT_EQ(out.lines.size(), 1u);
  const std::string& line = out.lines[0];
  ASSERT_TRUE(line.ends_with('\n'));
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line, R"({"ts":"2026-11-30T08:15:02.123Z","level":"info","msg":"claim decided",)"
                  R"("chargeId":"CHG-1","fence":3,"bytes":18446744073709551615,"seconds":0.25,)"
                  R"("final":true,"owner":"host/42"})"
                  "\n");
  const ordered_json json = out.parsed(0);
  EXPECT_TRUE(json["fence"].is_number_integer());
  EXPECT_TRUE(json["seconds"].is_number_float());
  EXPECT_TRUE(json["final"].is_boolean());
}

TEST(JsonLog, LinesInsideATraceScopeCarryItsTraceparentOnce) {
  Capture out;
  Logger log{LogLevel::Debug, out.sink(), kFixedClock};
  constexpr std::string_view kTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  {
    const TraceScope trace(parse_traceparent(kTrace));
    log.info("debited", {{"chargeId", "CHG-1"}});
    log.info("caller's own", {{"traceparent", "given"}});
  }
  log.info("after", {});
  ASSERT_TRUE(log.flush(kWait));
  ASSERT_EQ(out.lines.size(), 3u);
  EXPECT_EQ(out.parsed(0)["traceparent"], kTrace);
  EXPECT_EQ(out.parsed(0)["chargeId"], "CHG-1");
  EXPECT_EQ(out.parsed(1)["traceparent"], "given");  // never a duplicate key
  EXPECT_EQ(out.lines[1].find("traceparent", out.lines[1].find("traceparent") + 1),
            std::string::npos);
  EXPECT_FALSE(out.parsed(2).contains("traceparent"));
}

TEST(JsonLog, TimestampIsRfc3339UtcWithMilliseconds) {
  using namespace std::chrono;
  EXPECT_EQ(format_rfc3339_millis(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_rfc3339_millis(sys_days{year{2024} / 2 / 29} + 23h + 59min + 59s + 999ms),
            "2024-02-29T23:59:59.999Z");
  EXPECT_EQ(format_rfc3339_millis(fixed_now()), "2026-11-30T08:15:02.123Z");
}

TEST(JsonLog, FieldNamedLikeAReservedKeyIsPrefixedNotDuplicated) {
  Capture out;
  Logger log{LogLevel::Info, out.sink(), kFixedClock};
  log.info("real message", {{"msg", "caller's"}, {"level", 7}});
  ASSERT_TRUE(log.flush(kWait));
  const ordered_json json = out.parsed(0);
  EXPECT_EQ(json["msg"], "real message");
  EXPECT_EQ(json["level"], "info");
  EXPECT_EQ(json["_msg"], "caller's");
  EXPECT_EQ(json["_level"], 7);
}

TEST(JsonLog, LevelsBelowTheMinimumAreDropped) {
  Capture out;
  Logger log{LogLevel::Warn, out.sink(), kFixedClock};
  log.debug("d");
  log.info("i");
  log.warn("w");
  log.error("e");
  EXPECT_FALSE(log.enabled(LogLevel::Info));
  EXPECT_TRUE(log.enabled(LogLevel::Error));
  log.set_level(LogLevel::Debug);
  log.debug("d2");

  ASSERT_TRUE(log.flush(kWait));
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < out.lines.size(); ++i) {
    const ordered_json json = out.parsed(i);
    seen.push_back(json["level"].get<std::string>() + ":" + json["msg"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"warn:w", "error:e", "debug:d2"}));
}

TEST(JsonLog, ParseLogLevelAcceptsTheFourLevelsCaseInsensitively) {
  EXPECT_EQ(parse_log_level("debug"), LogLevel::Debug);
  EXPECT_EQ(parse_log_level("INFO"), LogLevel::Info);
  EXPECT_EQ(parse_log_level("Warn"), LogLevel::Warn);
  EXPECT_EQ(parse_log_level("warning"), LogLevel::Warn);
  EXPECT_EQ(parse_log_level("error"), LogLevel::Error);
  for (std::string_view bad : {"", "verbose", "info ", "trace", "3"}) {
    const auto parsed = parse_log_level(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_NE(parsed.error().find("debug, info, warn or error"), std::string::npos);
  }
  for (LogLevel level : {LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error}) {
    EXPECT_EQ(parse_log_level(to_string(level)), level);
  }
}

TEST(JsonLog, SecretValuesNeverReachTheOutputButClaimTokenDoes) {
  Capture out;
  Logger log{LogLevel::Debug, out.sink(), kFixedClock};
  log.warn("credentials refreshed", {{"secretAccessKey", "wJalrXUtnFEMI-SECRET-1"},
                                     {"sessionToken", "FwoGZXIvYXdz-SECRET-2"},
                                     {"Authorization", "AWS4-HMAC-SHA256 Credential=AKID/SECRET-3"},
                                     {"x-amz-security-token", "SECRET-4"},
                                     {"db_password", "SECRET-5"},
                                     {"AWS_CREDENTIAL_SOURCE", "SECRET-6"},
                                     {"pinToken", 987654321},
                                     {"claimToken", "tok-7f3a"},
                                     {"accessKeyId", "AKIDEXAMPLE"},
                                     {"chargeId", "CHG-1"}});

  ASSERT_TRUE(log.flush(kWait));
  const std::string& line = out.lines.at(0);
  EXPECT_EQ(line.find("SECRET"), std::string::npos) << line;
  EXPECT_EQ(line.find("987654321"), std::string::npos) << line;
  const ordered_json json = out.parsed(0);
  for (const char* key :
       {"secretAccessKey", "sessionToken", "Authorization", "x-amz-security-token", "db_password",
        "AWS_CREDENTIAL_SOURCE", "pinToken"}) {
    EXPECT_EQ(json[key], "[REDACTED]") << key;
  }
  EXPECT_EQ(json["claimToken"], "tok-7f3a");
  EXPECT_EQ(json["accessKeyId"], "AKIDEXAMPLE");
  EXPECT_EQ(json["chargeId"], "CHG-1");
}

TEST(JsonLog, RedactionDenyAndAllowListsAreExplicit) {
  for (std::string_view key :
       {"secret", "clientSecret", "PASSWORD", "passwd", "token", "refresh_token", "authorization",
        "credentials", "Cookie", "apiKey", "api_key", "privateKey", "private_key", "signature"}) {
    EXPECT_TRUE(is_redacted_key(key)) << key;
  }
  for (std::string_view key : {"claimToken", "claimtoken", "CLAIMTOKEN", "chargeId", "owner",
                               "accountId", "fence", "accessKeyId"}) {
    EXPECT_FALSE(is_redacted_key(key)) << key;
  }
  // Only the exact key is allowed: a longer key containing it is still a token.
  EXPECT_TRUE(is_redacted_key("claimTokenSecret"));
  EXPECT_TRUE(is_redacted_key(std::string(100, 'a')));
}

TEST(JsonLog, HostileValuesStayOnOneLineAndParseBack) {
  Capture out;
  Logger log{LogLevel::Debug, out.sink(), kFixedClock};
  const std::string hostile = std::string("quote\" backslash\\ nl\n cr\r tab\t nul") +
                              std::string(1, '\0') + "\x01\x1f end";
  const std::string invalid_utf8 = "ok \xff\xfe \xc3\x28 \xe2\x82 end";
  log.error("bad\ninput \xff", {{"body", hostile}, {"raw", invalid_utf8}, {"k\xff\"ey", 1}});

  ASSERT_TRUE(log.flush(kWait));
  ASSERT_EQ(out.lines.size(), 1u);
  const std::string& line = out.lines[0];
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_EQ(line.find('\0'), std::string::npos);
  EXPECT_EQ(line.find('\xff'), std::string::npos);
  const ordered_json json = out.parsed(0);  // throws on invalid JSON or invalid UTF-8
  EXPECT_EQ(json["body"], hostile);
  EXPECT_EQ(json["raw"], "ok \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD( \xEF\xBF\xBD end");
  EXPECT_EQ(json["msg"], "bad\ninput \xEF\xBF\xBD");
  EXPECT_EQ(json["k\xEF\xBF\xBD\"ey"], 1);
}

// A 200 KB key a producer repeated must not make a 200 KB line.
TEST(JsonLog, LongValuesAreCutAndMarkedWithTheirLength) {
  Capture out;
  Logger log{LogLevel::Debug, out.sink(), kFixedClock};
  const std::string huge(200'000, 'k');
  std::string accents;
  for (int i = 0; i < 1000; ++i) accents += "\xc3\xa9";  // "é", two bytes each
  log.warn("dead-lettering", {{"failureDetail", huge}, {"name", accents}, {"short", "ok"}});

  ASSERT_TRUE(log.flush(kWait));
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_LT(out.lines[0].size(), 3 * kMaxLogValueBytes);
  const ordered_json json = out.parsed(0);  // a cut inside "é" would not parse back
  EXPECT_EQ(json["failureDetail"], std::string(kMaxLogValueBytes, 'k') + "...(200000 bytes)");
  const std::string name = json["name"];
  EXPECT_TRUE(name.ends_with("...(2000 bytes)"));
  EXPECT_EQ(name.find("\xef\xbf\xbd"), std::string::npos) << "no replacement character";
  EXPECT_EQ(json["short"], "ok");
}

TEST(JsonLog, ConcurrentLoggingYieldsOnlyWholeLines) {
  std::ostringstream stream;
  Logger log{LogLevel::Info, ostream_sink(stream), kFixedClock};
  constexpr int kThreads = 8;
  constexpr int kLines = 500;
  const std::string padding(300, 'x');  // long lines make a torn write likely if unguarded
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kLines; ++i) {
          log.info("tick", {{"thread", t}, {"i", i}, {"pad", padding}});
        }
      });
    }
  }
  ASSERT_TRUE(log.flush(kWait));
  std::istringstream lines(stream.str());
  std::set<std::pair<int, int>> seen;
  for (std::string line; std::getline(lines, line);) {
    const ordered_json json = ordered_json::parse(line);
    EXPECT_EQ(json["pad"], padding);
    EXPECT_TRUE(seen.emplace(json["thread"].get<int>(), json["i"].get<int>()).second);
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kThreads * kLines));
}

// A sink that takes nothing until released, as stderr does when it is a pipe nobody reads.
// Shared with the sink, so a writer the logger left behind can still return from it.
struct StuckSink {
  std::latch released{1};
  std::atomic<int> entered{0};
  Mutex mutex;
  std::vector<std::string> lines GUARDED_BY(mutex);
  std::vector<std::string> calls GUARDED_BY(mutex);

  static LogSink of(const std::shared_ptr<StuckSink>& stuck) {
    return [stuck](std::string_view text) {
      stuck->entered.fetch_add(1);
      stuck->released.wait();
      MutexLock lock(stuck->mutex);
      append_lines(stuck->lines, text);
      stuck->calls.emplace_back(text);
    };
  }
  // Polls until the writer is inside the sink.
  [[nodiscard]] bool wait_entered() const {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (entered.load() == 0) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
  std::vector<std::string> messages() {
    MutexLock lock(mutex);
    std::vector<std::string> out;
    for (const auto& line : lines) out.push_back(ordered_json::parse(line)["msg"]);
    return out;
  }
};

TEST(JsonLog, AFullBufferDropsAndCountsLinesWithoutBlockingTheCaller) {
  auto stuck = std::make_shared<StuckSink>();
  Logger log{LogLevel::Info, StuckSink::of(stuck), kFixedClock, {.max_lines = 4}};
  Counter drops;
  log.count_drops(&drops);
  log.info("first");
  ASSERT_TRUE(stuck->wait_entered());
  // The writer holds "first" in the sink; three more fit, the rest are dropped at once.
  for (int i = 0; i < 10; ++i) log.info("more", {{"i", i}});
  EXPECT_EQ(log.dropped_lines(), 7u);
  EXPECT_EQ(drops.value(), 7u);
  EXPECT_FALSE(log.flush(Millis{1})) << "nothing can be written while the sink is stuck";
  stuck->released.count_down();
  ASSERT_TRUE(log.flush(kWait));
  EXPECT_EQ(stuck->messages(), (std::vector<std::string>{"first", "more", "more", "more"}));
}

TEST(JsonLog, OnceTheSinkTakesLinesAgainOneLineSaysHowManyWereDropped) {
  auto stuck = std::make_shared<StuckSink>();
  Logger log{LogLevel::Info, StuckSink::of(stuck), kFixedClock, {.max_lines = 2}};
  log.info("first");
  ASSERT_TRUE(stuck->wait_entered());
  log.info("second");
  for (int i = 0; i < 5; ++i) log.info("lost");
  stuck->released.count_down();
  ASSERT_TRUE(log.flush(kWait));
  log.info("after");
  ASSERT_TRUE(log.flush(kWait));
  log.info("later");  // no second notice
  ASSERT_TRUE(log.flush(kWait));

  EXPECT_EQ(stuck->messages(),
            (std::vector<std::string>{"first", "second", "log lines dropped", "after", "later"}));
  MutexLock lock(stuck->mutex);
  const ordered_json notice = ordered_json::parse(stuck->lines.at(2));
  EXPECT_EQ(notice["level"], "warn");
  EXPECT_EQ(notice["dropped"], 5);
  EXPECT_EQ(log.dropped_lines(), 5u) << "the total stays; only the notice's count restarts";
}

TEST(JsonLog, LinesReachTheSinkInTheOrderTheyWereLogged) {
  Capture out;
  Logger log{LogLevel::Info, out.sink(), kFixedClock};
  constexpr int kLines = 2'000;
  for (int i = 0; i < kLines; ++i) log.info("tick", {{"i", i}});
  ASSERT_TRUE(log.flush(kWait));
  ASSERT_EQ(out.lines.size(), static_cast<std::size_t>(kLines));
  for (int i = 0; i < kLines; ++i) ASSERT_EQ(out.parsed(static_cast<std::size_t>(i))["i"], i);
}

// What queued while the writer was busy reaches the sink in as few calls as whole lines allow:
// at most PIPE_BUF bytes each (one atomic write to a pipe), a longer line alone, in order.
TEST(JsonLog, QueuedLinesReachTheSinkPackedIntoWholeLineCallsOfAtMostPipeBuf) {
  auto stuck = std::make_shared<StuckSink>();
  Logger log{LogLevel::Info, StuckSink::of(stuck), kFixedClock};
  log.info("first");
  ASSERT_TRUE(stuck->wait_entered());
  const std::string kilobyte(1000, 'k');
  std::vector<std::string> expected{"first"};
  for (int i = 0; i < 300; ++i) {
    if (i % 50 == 7) {  // longer than PIPE_BUF on its own
      log.info("long", {{"i", i},
                        {"a", kilobyte},
                        {"b", kilobyte},
                        {"c", kilobyte},
                        {"d", kilobyte},
                        {"e", kilobyte}});
      expected.emplace_back("long");
    } else {
      log.info("tick", {{"i", i}, {"pad", std::string(static_cast<std::size_t>(i), 'x')}});
      expected.emplace_back("tick");
    }
  }
  stuck->released.count_down();
  ASSERT_TRUE(log.flush(kWait));

  EXPECT_EQ(stuck->messages(), expected);
  MutexLock lock(stuck->mutex);
  ASSERT_EQ(stuck->lines.size(), expected.size());
  for (std::size_t i = 0; i < stuck->lines.size(); ++i) {
    EXPECT_EQ(ordered_json::parse(stuck->lines[i]).value("i", -1), static_cast<int>(i) - 1);
  }
  std::size_t long_lines = 0;
  for (std::size_t c = 0; c < stuck->calls.size(); ++c) {
    const std::string& call = stuck->calls[c];
    ASSERT_TRUE(call.ends_with('\n')) << "a call ends with a whole line";
    if (call.size() > PIPE_BUF) {
      EXPECT_EQ(call.find('\n'), call.size() - 1) << "only a single line may exceed PIPE_BUF";
      ++long_lines;
      continue;
    }
    // Packed: the next call's first line would not have fitted in this one (call 0 is "first",
    // alone in the sink while the others queued).
    if (c > 0 && c + 1 < stuck->calls.size() && stuck->calls[c + 1].size() <= PIPE_BUF) {
      const std::string& next = stuck->calls[c + 1];
      EXPECT_GT(call.size() + next.find('\n') + 1, PIPE_BUF) << "call " << c;
    }
  }
  EXPECT_EQ(long_lines, 6u);
  EXPECT_LT(stuck->calls.size(), stuck->lines.size() / 4) << "lines were not batched";
}

TEST(JsonLog, BytesBoundTheBufferToo) {
  auto stuck = std::make_shared<StuckSink>();
  Logger log{LogLevel::Info, StuckSink::of(stuck), kFixedClock, {.max_bytes = 2'000}};
  log.info("first");
  ASSERT_TRUE(stuck->wait_entered());
  const std::string pad(600, 'x');
  for (int i = 0; i < 5; ++i) log.info("padded", {{"pad", pad}});
  // "first" is ~60 bytes and each padded line ~660: two fit beside it.
  EXPECT_EQ(log.dropped_lines(), 3u);
  stuck->released.count_down();
  ASSERT_TRUE(log.flush(kWait));
}

// The process must be able to exit while stderr is a pipe nobody reads.
TEST(JsonLog, DestructionReturnsWhileTheSinkIsStuck) {
  auto stuck = std::make_shared<StuckSink>();
  {
    Logger log{LogLevel::Info, StuckSink::of(stuck), kFixedClock, {.flush_timeout = Millis{20}}};
    log.info("never written");
    log.info("nor this");
    ASSERT_TRUE(stuck->wait_entered());
  }  // gives up after the flush timeout, leaving the writer in the sink
  EXPECT_EQ(stuck->messages(), std::vector<std::string>{});
  stuck->released.count_down();  // the writer it left behind ends on its own
}

TEST(JsonLog, DestructionFlushesWhatIsQueued) {
  Capture out;
  {
    Logger log{LogLevel::Info, out.sink(), kFixedClock};
    for (int i = 0; i < 100; ++i) log.info("tick", {{"i", i}});
  }
  EXPECT_EQ(out.lines.size(), 100u);
}

}  // namespace
}  // namespace ic::observability
