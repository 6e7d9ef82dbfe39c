// The forwarding ports hand every call, and every answer, through unchanged: a decorator
// derived from one changes only what it overrides.
#include "domain/forwarding_ports.hpp"

#include <gtest/gtest.h>

#include "event/run_blocking.hpp"
#include "testing/fakes.hpp"

namespace ic::domain {
namespace {

using testing::FakeBank;
using testing::FakeNotifier;
using testing::make_charge;

TEST(ForwardingDebitPort, ForwardsEachDebitAndTheBanksAnswer) {
  FakeBank bank;
  ForwardingDebitPort port(bank);
  const DebitResult first = event::run_blocking(port.debit(make_charge(), "key-1"));
  const DebitResult replay = event::run_blocking(port.debit(make_charge(), "key-1"));
  ASSERT_TRUE(std::holds_alternative<Debited>(first));
  ASSERT_TRUE(std::holds_alternative<Debited>(replay));
  EXPECT_EQ(std::get<Debited>(first).debit_ref, "DBT-key-1");
  EXPECT_FALSE(std::get<Debited>(first).replayed);
  EXPECT_TRUE(std::get<Debited>(replay).replayed);
  EXPECT_EQ(bank.calls_for("key-1"), 2);
  EXPECT_EQ(&port.target(), &bank);
}

TEST(ForwardingNotificationPort, ForwardsEachNotificationAndItsAnswer) {
  FakeNotifier notifier;
  ForwardingNotificationPort port(notifier);
  EXPECT_TRUE(std::holds_alternative<NotificationSent>(
      event::run_blocking(port.notify(make_charge(), "DBT-1", "key-1"))));
  notifier.fail_all();
  EXPECT_TRUE(std::holds_alternative<NotificationFailed>(
      event::run_blocking(port.notify(make_charge(), "DBT-1", "key-2"))));
  EXPECT_EQ(notifier.keys(), (std::vector<std::string>{"key-1", "key-2"}));
  EXPECT_EQ(&port.target(), &notifier);
}

}  // namespace
}  // namespace ic::domain
