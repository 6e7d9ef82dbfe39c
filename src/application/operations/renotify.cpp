// renotify: the notification of DEBITED_NOTIFICATION_FAILED charges, sent again.
#include <algorithm>
#include <vector>

#include "application/operations/commands.hpp"
#include "application/operations/report.hpp"
#include "domain/charge_status.hpp"

namespace ic::application {

int renotify(OperatorActions& actions, idempotency::OperatorStore& operators,
             domain::NotificationPort& notifier, Console& console, const RenotifyRequest& request) {
  if (!request.all_failed_notifications) {
    return report_outcome(console, "renotify", actions.renotify(request.charge_id, notifier),
                          request.charge_id);
  }
  // Every record listed first, then acted on: each action takes its record out of the index,
  // and paging an index while emptying it would skip entries.
  std::vector<std::string> keys;
  std::string cursor;
  const std::string wanted(to_string(domain::ChargeStatus::DebitedNotificationFailed));
  do {
    auto page = operators.needing_attention(wanted, Instant{}, cursor);
    if (!page) return store_failure(console, "renotify", page.error());
    for (const auto& record : page->records) keys.push_back(record.key);
    cursor = page->next;
  } while (!cursor.empty());
  int worst = 0;
  for (const std::string& key : keys) {
    worst =
        std::max(worst, report_outcome(console, "renotify", actions.renotify(key, notifier), key));
  }
  console.result(nlohmann::json{{"event", "renotified"}, {"charges", keys.size()}}.dump());
  return worst;
}

}  // namespace ic::application
