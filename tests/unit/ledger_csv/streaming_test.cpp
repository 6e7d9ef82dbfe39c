// A generated ledger of IC_RECONCILE_ROWS rows (default 50,000; 1,000,000 for the figure in
// docs/design.md) streamed through the CSV reader and reconcile: peak RSS grows by the key set
// (about 40 bytes a distinct key), never by the ledger. Asserts memory, not time.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <istream>
#include <streambuf>

#include "adapters/ledger_csv/ledger_csv.hpp"
#include "application/operations/commands.hpp"
#include "application/operations/reconcile.hpp"

namespace ic::ledger_csv {
namespace {

std::size_t rows_wanted() {
  const char* text = std::getenv("IC_RECONCILE_ROWS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 50'000;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

std::string key_of(std::size_t i) {
  return "CHG-20261201-" + std::to_string(10'000'000 + i);
}

// The ledger written row by row as it is read: the test never holds the file.
class GeneratedLedger final : public std::streambuf {
 public:
  explicit GeneratedLedger(std::size_t rows) : rows_(rows) {
    line_ = "idempotencyKey,debitId,accountId,amountMinor,currency,postedAt,narrative\n";
    setg(line_.data(), line_.data(), line_.data() + line_.size());
  }

 protected:
  int_type underflow() override {
    if (next_ == rows_) return traits_type::eof();
    const std::string key = key_of(next_);
    line_ = key + ",DBT-" + key +
            ",ACC-0012345678,2500,INR,2026-12-01T08:15:00.123Z,"
            "\"SMS alert fee, December\"\n";
    ++next_;
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(line_[0]);
  }

 private:
  std::size_t rows_;
  std::size_t next_ = 0;
  std::string line_;
};

// Every key is recorded DEBITED with the row's debitId: the table as a clean run leaves it.
class EveryKeyDebited final : public application::RecordSource {
 public:
  std::expected<std::vector<idempotency::ClaimRecord>, Error> get_many(
      std::span<const std::string> keys) override {
    std::vector<idempotency::ClaimRecord> out;
    for (const std::string& key : keys) {
      out.push_back({.key = key,
                     .state = idempotency::ClaimState::Done,
                     .status = "DEBITED",
                     .result_ref = "DBT-" + key,
                     .payload = "v1|" + key + "|ACC-0012345678|SMS_ALERT_FEE|2500|INR|2026-12-01"});
    }
    return out;
  }
  std::expected<idempotency::RecordPage, Error> debited_between(Instant, Instant, bool,
                                                                std::string_view, int) override {
    return idempotency::RecordPage{};
  }
};

class CountingConsole final : public application::Console {
 public:
  std::size_t results = 0;
  std::string last;
  void result(std::string_view line) override {
    ++results;
    last = line;
  }
  void note(std::string_view) override {}
};

TEST(ReconcileStreaming, ALargeLedgerStreamsInMemoryBoundedByItsKeys) {
  const std::size_t rows = rows_wanted();
  GeneratedLedger generated(rows);
  std::istream in(&generated);
  LedgerCsv ledger(in);
  EveryKeyDebited records;
  CountingConsole console;
  const long before = peak_rss_kib();
  EXPECT_EQ(application::reconcile(ledger, records, console, {}), 0) << console.last;
  const long grown_kib = peak_rss_kib() - before;
  EXPECT_EQ(console.results, 1U) << "only the summary";
  EXPECT_NE(console.last.find("\"matched\":" + std::to_string(rows)), std::string::npos)
      << console.last;
  // ~40 bytes a key in the set, plus allocator slack; the ledger itself is ~120 bytes a row.
  const long bound_kib = 16 * 1024 + static_cast<long>(rows * 64 / 1024);
  EXPECT_LT(grown_kib, bound_kib);
  std::printf("reconcile streamed %zu rows: peak RSS grew %ld KiB (bound %ld KiB)\n", rows,
              grown_kib, bound_kib);
}

}  // namespace
}  // namespace ic::ledger_csv
