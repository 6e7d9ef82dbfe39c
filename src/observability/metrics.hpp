// Metrics registry: counter, gauge and histogram families with labels, rendered in the
// Prometheus text exposition format 0.0.4.
//
//   MetricsRegistry registry;
//   auto& outcomes = registry.counter("ic_claim_outcomes_total", "Claim outcomes", {"outcome"});
//   Counter& acquired = outcomes.with({"ACQUIRED"});   // keep the handle on the hot path
//   acquired.inc();
//   auto& seconds = registry.histogram("ic_processing_seconds", "Time per message",
//                                      kDefaultSecondsBuckets);
//   seconds.with({}).observe(0.042);
//   std::string text = registry.render();
//
// Thread-safety: everything may be called from any thread. A series is a few atomics (relaxed:
// metrics order nothing); a family finds a series under a shared lock and takes the exclusive
// lock only to create one. Series and families live as long as the registry, so references
// returned by with() and counter()/gauge()/histogram() stay valid that long.
// Misuse at wiring time (invalid name, wrong number of label values, one name registered with
// two types) is a broken invariant and throws std::invalid_argument.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/thread_annotations.hpp"

namespace ic::observability {

// 5 ms … 30 s: from a cache-hit duplicate to a slow bank call near its timeout.
inline const std::vector<double> kDefaultSecondsBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                        0.5,   1,    2.5,   5,    10,  30};

class Counter {
 public:
  void inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t value() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Gauge {
 public:
  void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void add(double delta) noexcept { value_.fetch_add(delta, std::memory_order_relaxed); }
  void inc() noexcept { add(1); }
  void dec() noexcept { add(-1); }
  [[nodiscard]] double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts per bucket are stored non-cumulatively (one slot per upper bound plus one for +Inf)
// and summed at render time, so the rendered _count always equals the +Inf bucket.
class Histogram {
 public:
  explicit Histogram(std::span<const double> upper_bounds);

  // NaN is ignored.
  void observe(double v) noexcept;

  struct Snapshot {
    std::vector<std::uint64_t> cumulative;  // one per upper bound, then +Inf
    double sum = 0;
  };
  [[nodiscard]] Snapshot snapshot() const;
  [[nodiscard]] std::span<const double> upper_bounds() const noexcept { return upper_bounds_; }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// Orders label-value tuples so lookups can use string_views without allocating.
struct LabelValuesLess {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return std::ranges::lexicographical_compare(
        a, b, [](std::string_view x, std::string_view y) { return x < y; });
  }
};

template <class Series>
class Family {
 public:
  using Factory = std::function<std::unique_ptr<Series>()>;

  Family(std::string name, std::string help, std::vector<std::string> label_names, Factory factory);

  // The series for these label values (in label-name order), created on first use.
  [[nodiscard]] Series& with(std::initializer_list<std::string_view> label_values);

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& help() const noexcept { return help_; }
  [[nodiscard]] const std::vector<std::string>& label_names() const noexcept {
    return label_names_;
  }
  // Calls visit(label_values, series) for every series, in label-value order, under the
  // shared lock.
  void for_each(
      const std::function<void(const std::vector<std::string>&, const Series&)>& visit) const;

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
  Factory factory_;
  mutable SharedMutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Series>, LabelValuesLess> series_
      GUARDED_BY(mutex_);
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class MetricsRegistry {
 public:
  // Registering an existing name with the same type and labels returns the existing family.
  CounterFamily& counter(std::string_view name, std::string_view help,
                         std::vector<std::string> label_names = {});
  GaugeFamily& gauge(std::string_view name, std::string_view help,
                     std::vector<std::string> label_names = {});
  // upper_bounds: finite and strictly increasing; +Inf is implicit.
  HistogramFamily& histogram(std::string_view name, std::string_view help,
                             std::vector<double> upper_bounds,
                             std::vector<std::string> label_names = {});

  // Text that render() appends after the families, produced at render time: metrics that are
  // read rather than counted (the process_* ones). Must be valid exposition text, quick, and
  // thread-safe; it runs under the registry's lock.
  using Collector = std::function<std::string()>;
  void add_collector(Collector collector);

  // Every family sorted by name, its series sorted by label values, then each collector's text.
  [[nodiscard]] std::string render() const;

 private:
  template <class Series>
  Family<Series>& add(std::string_view name, std::string_view help,
                      std::vector<std::string> label_names,
                      typename Family<Series>::Factory factory);

  using AnyFamily = std::variant<std::unique_ptr<CounterFamily>, std::unique_ptr<GaugeFamily>,
                                 std::unique_ptr<HistogramFamily>>;
  mutable Mutex mutex_;
  std::map<std::string, AnyFamily, std::less<>> families_ GUARDED_BY(mutex_);
  std::vector<Collector> collectors_ GUARDED_BY(mutex_);
};

}  // namespace ic::observability
