// Creates the idempotency table (docs/design.md §3) and turns on TTL on expiresAt. Idempotent:
// an existing table and an already enabled TTL are success, so `provision` is safe to re-run.
//
//   auto report = provision_table(dynamodb_client, "idempotency", {});
//   // report->created: false when the table already existed
#pragma once

#include <chrono>
#include <expected>
#include <string>
#include <string_view>

#include "aws/json_client.hpp"
#include "core/error.hpp"
#include "core/time.hpp"

namespace ic::dynamodb {

struct ProvisionOptions {
  std::chrono::milliseconds active_timeout{std::chrono::seconds(120)};  // wait for ACTIVE
  std::chrono::milliseconds poll_interval{500};
  // Injected so tests need not wait; borrowed for the call. The deadline is measured on this
  // wall clock: a clock step during the wait lengthens or shortens it, which an operator
  // command that is safe to re-run can accept.
  const Clock& clock = real_clock();
  Sleeper& sleeper = real_sleeper();
};

struct ProvisionReport {
  bool created = false;      // false when the table existed already
  bool ttl_enabled = false;  // false only where the endpoint does not support TTL
  // false for a table created before the index existed: `list` needs it added (UpdateTable)
  bool attention_index = false;
};

// Blocks its thread for every request (event::run_blocking): call it outside any loop.
// Thread-safety: stateless; concurrent calls (e.g. two `provision` runs) are safe because
// every step tolerates the other having done it first.
[[nodiscard]] std::expected<ProvisionReport, Error> provision_table(
    aws::JsonClient& client, std::string_view table, const ProvisionOptions& options);

}  // namespace ic::dynamodb
