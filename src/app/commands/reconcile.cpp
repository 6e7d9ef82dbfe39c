// reconcile: the command line and wiring; the rules are application/operations/reconcile.cpp.
#include "application/operations/reconcile.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "adapters/dynamodb/dynamodb_operator_store.hpp"
#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/ledger_csv/ledger_csv.hpp"
#include "app/cli_support.hpp"
#include "app/operator_ports.hpp"
#include "app/system_adapters.hpp"

namespace ic::app {
namespace {

constexpr std::chrono::seconds kProgressEvery{5};
constexpr std::size_t kProgressRows = 1'000'000;

struct ReconcileState {
  application::ReconcileRequest request;
  std::string ledger;
  std::string since;
  std::string until;
  std::string format = "json";
  bool resolve_uncertain = false;
  bool dry_run = false;
  std::string actor;
};

// Without --full, RECORDED_NOT_DEBITED comes from the attention index (the records whose
// notification failed); with it, from a Scan (docs/design.md "reconcile").
class TableRecords final : public application::RecordSource {
 public:
  explicit TableRecords(dynamodb::DynamoDbOperatorStore& store) : store_(store) {}
  std::expected<std::vector<idempotency::ClaimRecord>, Error> get_many(
      std::span<const std::string> keys) override {
    return store_.get_many(keys);
  }
  std::expected<idempotency::RecordPage, Error> debited_between(Instant since, Instant until,
                                                                bool full_scan,
                                                                std::string_view cursor,
                                                                int page_items) override {
    if (full_scan) return store_.debited_between(since, until, cursor, page_items);
    return store_.needing_attention("DEBITED_NOTIFICATION_FAILED", since, cursor);
  }

 private:
  dynamodb::DynamoDbOperatorStore& store_;
};

// Results go to a temporary file until the run ends, so a malformed row found late prints
// nothing but its one line, in bounded memory however many discrepancies came before it.
class SpooledConsole final : public application::Console {
 public:
  SpooledConsole() : spool_(std::tmpfile()) {}
  ~SpooledConsole() override {
    if (spool_ != nullptr) std::fclose(spool_);
  }
  SpooledConsole(const SpooledConsole&) = delete;
  SpooledConsole& operator=(const SpooledConsole&) = delete;

  void result(std::string_view line) override {
    if (spool_ == nullptr) {
      std::cout << line << "\n";
      return;
    }
    std::fwrite(line.data(), 1, line.size(), spool_);
    std::fputc('\n', spool_);
  }
  void note(std::string_view line) override { std::cerr << line << "\n"; }
  void release() {
    if (spool_ == nullptr) return;
    std::rewind(spool_);
    std::array<char, 65536> chunk{};
    for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), spool_)) > 0;)
      std::cout.write(chunk.data(), static_cast<std::streamsize>(n));
    std::cout.flush();
  }

 private:
  std::FILE* spool_;
};

// A progress line on stderr every kProgressEvery or kProgressRows, whichever comes first.
std::function<void(std::size_t)> progress_reporter() {
  struct Last {
    Instant at = real_clock().now();
    std::size_t rows = 0;
  };
  auto last = std::make_shared<Last>();
  return [last](std::size_t rows) {
    const Instant now = real_clock().now();
    if (now - last->at < kProgressEvery && rows - last->rows < kProgressRows) return;
    last->at = now;
    last->rows = rows;
    std::cerr << fmt::format(R"({{"event":"progress","ledgerRows":{}}})", rows) << "\n";
  };
}

}  // namespace

void add_reconcile(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto state = std::make_shared<ReconcileState>();
  auto& request = state->request;
  auto* cmd = app.add_subcommand(
      "reconcile",
      "Compare the idempotency table with the bank's debit ledger (CSV export): debits not "
      "recorded, records not debited, amount and debit-reference mismatches, duplicate debits");
  describe(*cmd,
           "One JSON line per discrepancy, then {\"event\":\"reconciled\",...}. Exit 0 all "
           "matched, 6 discrepancies, 2 usage or input error.\nExamples:\n"
           "  charge-recovery reconcile --ledger ledger-2026-12-01.csv\n"
           "  bank-export | charge-recovery reconcile --ledger - --since 2026-12-01 --full");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"IDEMPOTENCY_TABLE", "LEASE_SECONDS", "RETENTION_DAYS"});
  cmd->add_option("--ledger", state->ledger, "the bank's ledger export (CSV), - for stdin")
      ->required();
  cmd->add_option("--since", state->since,
                  "window start: YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ, or 90m / 24h / 7d ago "
                  "(default: the ledger's first postedAt minus one lease)");
  cmd->add_option("--until", state->until,
                  "window end, the same forms (default: the ledger's "
                  "last postedAt plus one lease)");
  cmd->add_option("--format", state->format, "json or text")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  cmd->add_flag("--full", request.full_scan,
                "find RECORDED_NOT_DEBITED among DEBITED records too, by a bounded Scan");
  cmd->add_option("--scan-limit", request.scan_limit, "--full: items the Scan reads at most")
      ->check(CLI::Range(1, 1'000'000'000))
      ->capture_default_str();
  cmd->add_flag("--resolve-uncertain", state->resolve_uncertain,
                "settle DEBIT_UNCERTAIN charges from the ledger instead: debited -> DONE with its "
                "debitId, not debited -> reopened (audited writes)");
  cmd->add_flag("--dry-run", state->dry_run, "--resolve-uncertain: say what it would write");
  cmd->add_option("--actor", state->actor,
                  "--resolve-uncertain: who, for the audit entries (default: $USER@host)");
  cmd->callback([&settings, &exit_code, state] {
    auto table = table_and_retention(settings);
    if (!table) {
      exit_code = table.error();
      return;
    }
    auto lease = lease_setting(settings);
    if (!lease) {
      exit_code = report(lease.error());
      return;
    }
    auto& wanted = state->request;
    auto since = time_flag("--since", state->since);
    auto until = since ? time_flag("--until", state->until) : since;
    if (!since || !until) {
      exit_code = !since ? since.error() : until.error();
      return;
    }
    wanted.since = *since;
    wanted.until = *until;
    wanted.lease = *lease;
    wanted.text = state->format == "text";
    wanted.progress = progress_reporter();
    std::ifstream file;
    if (state->ledger != "-") {
      file.open(state->ledger, std::ios::binary);
      if (!file) {
        exit_code = report({fmt::format("--ledger: cannot open {}", state->ledger)});
        return;
      }
    }
    std::istream& in = state->ledger == "-" ? std::cin : file;
    const std::string actor = actor_or_default(state->actor, settings);
    exit_code = with_aws(settings, [&](AwsStack& aws) {
      dynamodb::DynamoDbOperatorStore operators(aws.dynamodb(),
                                                charge_table(table->table, table->retention));
      ledger_csv::LedgerCsv ledger(in);
      if (state->resolve_uncertain) {
        dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(),
                                                 charge_table(table->table, table->retention));
        RandomTokens tokens;
        application::OperatorActions actions(store, operators, real_clock(), tokens, actor);
        StdConsole console;
        return application::resolve_uncertain(
            ledger, operators, actions, console,
            {.since = wanted.since, .lease = wanted.lease, .dry_run = state->dry_run});
      }
      TableRecords records(operators);
      SpooledConsole console;
      const int code = application::reconcile(ledger, records, console, wanted);
      if (code != application::kInputErrorExit) console.release();
      return code;
    });
  });
}

}  // namespace ic::app
