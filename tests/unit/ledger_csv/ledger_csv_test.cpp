// The ledger export reader: columns by header name in any order, extra columns ignored,
// RFC 4180 quoting, and every malformed input an error naming its line and column.
#include "adapters/ledger_csv/ledger_csv.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace ic::ledger_csv {
namespace {

using application::LedgerError;
using application::LedgerRow;

struct Read {
  std::vector<LedgerRow> rows;
  std::optional<LedgerError> error;
};

Read read_all(const std::string& text) {
  std::istringstream in(text);
  LedgerCsv csv(in);
  Read out;
  for (;;) {
    auto row = csv.next();
    if (!row) {
      out.error = row.error();
      EXPECT_FALSE(csv.next().has_value()) << "an error repeats";
      return out;
    }
    if (!*row) return out;
    out.rows.push_back(std::move(**row));
  }
}

const std::string kHeader = "idempotencyKey,debitId,accountId,amountMinor,currency,postedAt\n";

TEST(LedgerCsv, ReadsTheSixColumnsInAnyOrderAndIgnoresOthers) {
  const Read r = read_all(
      "note,postedAt,currency,amountMinor,accountId,debitId,idempotencyKey\r\n"
      "x,2026-12-01T08:15:00.123Z,INR,2500,ACC-1,DBT-1,CHG-1\r\n"
      "\"a, \"\"quoted\"\"\nnote\",2026-12-01T08:15:01Z,INR,1,ACC-2,DBT-2,\"CHG-2\"\r\n");
  ASSERT_FALSE(r.error) << r.error->message;
  ASSERT_EQ(r.rows.size(), 2U);
  EXPECT_EQ(r.rows[0].idempotency_key, "CHG-1");
  EXPECT_EQ(r.rows[0].debit_id, "DBT-1");
  EXPECT_EQ(r.rows[0].account_id, "ACC-1");
  EXPECT_EQ(r.rows[0].amount_minor, 2500);
  EXPECT_EQ(r.rows[0].currency, "INR");
  EXPECT_EQ(r.rows[0].posted_at.time_since_epoch(), Millis{1'796'112'900'123});
  EXPECT_EQ(r.rows[0].line, 2U);
  EXPECT_EQ(r.rows[1].idempotency_key, "CHG-2");
  EXPECT_EQ(r.rows[1].line, 3U) << "the record's first line";
}

TEST(LedgerCsv, AHeaderOnlyOrBlankLinesAreNoRows) {
  EXPECT_TRUE(read_all(kHeader).rows.empty());
  const Read r = read_all(kHeader + "\n" + "CHG-1,D,A,1,INR,2026-12-01T00:00:00Z" + "\n\n");
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.rows.size(), 1U);
}

TEST(LedgerCsv, MalformedInputNamesItsLineAndColumn) {
  struct Case {
    std::string text;
    std::size_t line;
    std::string column;
  };
  for (const Case& c : std::vector<Case>{
           {"", 1, ""},
           {"idempotencyKey,debitId,accountId,amountMinor,currency\n", 1, "postedAt"},
           {kHeader +
                "CHG-1,D,A,1,INR,2026-12-01T00:00:00Z\nCHG-2,D,A,2.5,INR,2026-12-01T00:00:00Z\n",
            3, "amountMinor"},
           {kHeader + "CHG-1,D,A,-1,INR,2026-12-01T00:00:00Z\n", 2, "amountMinor"},
           {kHeader + "CHG-1,D,A,1,inr,2026-12-01T00:00:00Z\n", 2, "currency"},
           {kHeader + "CHG-1,D,A,1,INR,2026-12-01 00:00:00\n", 2, "postedAt"},
           {kHeader + "CHG-1,D,A,1,INR,2026-02-30T00:00:00Z\n", 2, "postedAt"},
           {kHeader + "CHG-1,D,A,1,INR,2026-12-01T00:00:00+01:00\n", 2, "postedAt"},
           {kHeader + ",D,A,1,INR,2026-12-01T00:00:00Z\n", 2, "idempotencyKey"},
           {kHeader + "CHG-1,D,A,1,INR\n", 2, ""},
           {kHeader + "CHG-1,\"D,A,1,INR,2026-12-01T00:00:00Z\n", 2, ""},
           {kHeader + "CHG-1,D\"x,A,1,INR,2026-12-01T00:00:00Z\n", 2, "2"},
           {kHeader + "CHG-1,\"D\"x,A,1,INR,2026-12-01T00:00:00Z\n", 2, "2"},
           {kHeader + "CHG-1," + std::string(kMaxFieldBytes + 1, 'D') +
                ",A,1,INR,2026-12-01T00:00:00Z\n",
            2, "2"}}) {
    const Read r = read_all(c.text);
    ASSERT_TRUE(r.error) << c.text;
    EXPECT_EQ(r.error->line, c.line) << c.text;
    EXPECT_EQ(r.error->column, c.column) << c.text;
    EXPECT_FALSE(r.error->message.empty());
  }
}

}  // namespace
}  // namespace ic::ledger_csv
