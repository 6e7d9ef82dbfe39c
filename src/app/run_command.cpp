#include "app/run_command.hpp"

#include <signal.h>

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "adapters/bank_http/core_banking_client.hpp"
#include "adapters/bank_http/notification_client.hpp"
#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/aws_stack.hpp"
#include "app/system_adapters.hpp"
#include "app/telemetry.hpp"
#include "application/charge_message_handler.hpp"
#include "consumer/listener_container.hpp"
#include "core/time.hpp"
#include "observability/admin_server.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;

// The bank answers in milliseconds; 10 s bounds a hung call well inside any sane lease, and a
// timeout is safe to retry because the bank dedupes on chargeId.
constexpr http::HttpTimeouts kBankTimeouts{.connect = 2s, .total = 10s};
constexpr std::string_view kReadinessProbeKey = "__readiness_probe__";
constexpr auto kReadinessProbeInterval = 5s;

// SIGTERM/SIGINT are blocked in every thread and taken by one waiter, which asks the container
// to stop: a signal handler could do nothing of the sort safely.
class ShutdownSignals {
 public:
  ShutdownSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  void on_signal(std::function<void(int)> stop) {
    waiter_ = std::jthread([this, stop = std::move(stop)](std::stop_token token) {
      const timespec poll{0, 200'000'000};
      while (!token.stop_requested()) {
        const int signal = sigtimedwait(&set_, nullptr, &poll);
        if (signal > 0) {
          stop(signal);
          return;
        }
      }
    });
  }

 private:
  sigset_t set_;
  std::jthread waiter_;
};

int startup_failure(obs::Logger& log, std::string_view what, std::string_view detail) {
  log.error("start-up failed", {{"step", what}, {"detail", detail}});
  return 1;
}

}  // namespace

int run_consumer(const RunSettings& settings, const aws::EnvLookup& env) {
  auto level = obs::parse_log_level(settings.log_level);
  if (!level) return report({"LOG_LEVEL: " + level.error()});
  auto admin_addr = obs::parse_host_port(settings.admin_addr);
  if (!admin_addr) return report({"ADMIN_ADDR: " + admin_addr.error()});
  auto bank_endpoint = bank::BankEndpoint::create(settings.core_banking_url, kBankTimeouts);
  auto notify_endpoint = bank::BankEndpoint::create(settings.notification_url, kBankTimeouts);
  if (!bank_endpoint) return report({"CORE_BANKING_URL: " + bank_endpoint.error()});
  if (!notify_endpoint) return report({"NOTIFICATION_URL: " + notify_endpoint.error()});

  ShutdownSignals signals;  // before any thread starts, so all of them inherit the mask
  obs::Logger log(*level);
  obs::MetricsRegistry metrics;
  Telemetry telemetry(log, metrics);
  AwsStack aws(settings.aws, env, &telemetry);

  dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(),
                                           charge_table(settings.table, settings.retention));
  sqs::SqsQueue queue(aws.sqs(), settings.queue_url, settings.dlq_url);
  http::CurlHttpTransport bank_transport;
  bank::CoreBankingClient bank(bank_transport, *bank_endpoint);
  bank::NotificationClient notifier(bank_transport, *notify_endpoint);
  const Clock& clock = real_clock();
  RandomTokens tokens;
  const std::string owner = worker_identity();

  application::ChargeRecoveryService service(store, bank, notifier, clock, tokens, telemetry,
                                             {.lease = settings.lease, .owner = owner});
  const application::ChargeMessageHandler handler(service);

  obs::AdminServer admin(*admin_addr, metrics);
  admin.add_readiness_check("queue_polling", [&] {
    return obs::ReadinessResult{telemetry.polling(), telemetry.polling() ? "" : "no receive yet"};
  });
  admin.add_readiness_check("table_reachable", [&] {
    return obs::ReadinessResult{telemetry.table_reachable(), settings.table};
  });
  if (auto started = admin.start(); !started) {
    return startup_failure(log, "admin server", started.error());
  }

  // Until the table has answered, probe it every few seconds; after that every claim reports.
  std::jthread table_prober([&](std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any wake;
    while (!stop.stop_requested() && !telemetry.table_reachable()) {
      if (auto probe = store.get(kReadinessProbeKey); probe) {
        telemetry.table_answered(true);
        break;
      } else {
        log.error("idempotency table not reachable", {{"table", settings.table},
                                                      {"code", probe.error().code},
                                                      {"detail", probe.error().message}});
      }
      std::unique_lock lock(mutex);
      wake.wait_for(lock, stop, kReadinessProbeInterval, [] { return false; });
    }
  });

  consumer::ListenerContainer container(
      queue,
      [&](const consumer::Message& message, consumer::LeaseHeartbeat& heartbeat) {
        const MessageScope scope(message.message_id);
        consumer::Disposition disposition =
            handler.handle(message.body, message.receive_count, heartbeat);
        if (const auto* dead = std::get_if<consumer::DeadLetter>(&disposition)) {
          log.warn("dead-lettering", {{"messageId", message.message_id},
                                      {"chargeId", dead->key},
                                      {"failureReason", dead->reason},
                                      {"failureDetail", dead->detail},
                                      {"receiveCount", message.receive_count}});
        }
        return disposition;
      },
      {.workers = static_cast<std::size_t>(settings.workers),
       .receivers = static_cast<std::size_t>(settings.receivers),
       // One batch per receiver waits ready, so workers do not idle through a receive; a
       // prefetched message older than a quarter lease is handed back before its visibility
       // (one lease from the receive) could lapse ahead of the heartbeat's first extension.
       .prefetch = consumer::kMaxReceiveMessages * static_cast<std::size_t>(settings.receivers),
       .prefetch_max_age = Millis{settings.lease} / 4,
       .shutdown_grace = settings.shutdown_grace},
      &telemetry);
  signals.on_signal([&](int signal) {
    log.info("stopping", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
    container.request_stop();
  });

  log.info("consumer started", {{"owner", owner},
                                {"queueUrl", settings.queue_url},
                                {"table", settings.table},
                                {"workers", settings.workers},
                                {"leaseSeconds", settings.lease.count()},
                                {"adminPort", admin.port()}});
  container.run();
  admin.stop();
  log.info("consumer stopped", {});
  return 0;
}

}  // namespace ic::app
