#include "observability/metrics.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <stdexcept>

namespace ic::observability {
namespace {

bool valid_name(std::string_view name, bool allow_colon) {
  auto head = [&](unsigned char c) {
    return std::isalpha(c) || c == '_' || (allow_colon && c == ':');
  };
  auto tail = [&](unsigned char c) { return head(c) || std::isdigit(c); };
  return !name.empty() && head(static_cast<unsigned char>(name.front())) &&
         std::ranges::all_of(name.substr(1),
                             [&](char c) { return tail(static_cast<unsigned char>(c)); });
}

void check_names(std::string_view name, const std::vector<std::string>& label_names,
                 bool histogram) {
  if (!valid_name(name, true)) {
    throw std::invalid_argument(fmt::format("invalid metric name \"{}\"", name));
  }
  for (const std::string& label : label_names) {
    // "__" is reserved by Prometheus; "le" is the bucket label of a histogram.
    if (!valid_name(label, false) || label.starts_with("__") || (histogram && label == "le")) {
      throw std::invalid_argument(
          fmt::format("invalid label name \"{}\" for metric \"{}\"", label, name));
    }
  }
}

void check_bounds(std::span<const double> bounds) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      throw std::invalid_argument("histogram bounds must be finite and strictly increasing");
    }
  }
}

}  // namespace

Histogram::Histogram(std::span<const double> upper_bounds)
    : upper_bounds_(upper_bounds.begin(), upper_bounds.end()),
      counts_(std::make_unique<std::atomic<std::uint64_t>[]>(upper_bounds.size() + 1)) {
  check_bounds(upper_bounds_);
}

void Histogram::observe(double v) noexcept {
  // A NaN would poison _sum for the life of the process; it can only come from a caller bug.
  if (std::isnan(v)) return;
  // First bound >= v, since buckets are "less or equal"; above every bound is the +Inf slot.
  const auto slot =
      static_cast<std::size_t>(std::ranges::lower_bound(upper_bounds_, v) - upper_bounds_.begin());
  counts_[slot].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot out;
  out.cumulative.reserve(upper_bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= upper_bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    out.cumulative.push_back(running);
  }
  out.sum = sum_.load(std::memory_order_relaxed);
  return out;
}

template <class Series>
Family<Series>::Family(std::string name, std::string help, std::vector<std::string> label_names,
                       Factory factory)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      factory_(std::move(factory)) {
  // A metric without labels exists from registration, so it is scraped as 0 before first use.
  if (label_names_.empty()) series_.emplace(std::vector<std::string>{}, factory_());
}

template <class Series>
Series& Family<Series>::with(std::initializer_list<std::string_view> label_values) {
  if (label_values.size() != label_names_.size()) {
    throw std::invalid_argument(fmt::format("metric \"{}\" takes {} label values, got {}", name_,
                                            label_names_.size(), label_values.size()));
  }
  {
    const ReaderLock lock(mutex_);
    if (auto it = series_.find(label_values); it != series_.end()) return *it->second;
  }
  const WriterLock lock(mutex_);
  auto [it, inserted] =
      series_.try_emplace(std::vector<std::string>(label_values.begin(), label_values.end()));
  if (inserted) it->second = factory_();
  return *it->second;
}

template <class Series>
void Family<Series>::for_each(
    const std::function<void(const std::vector<std::string>&, const Series&)>& visit) const {
  const ReaderLock lock(mutex_);
  for (const auto& [values, series] : series_) visit(values, *series);
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

template <class Series>
Family<Series>& MetricsRegistry::add(std::string_view name, std::string_view help,
                                     std::vector<std::string> label_names,
                                     typename Family<Series>::Factory factory) {
  check_names(name, label_names, std::same_as<Series, Histogram>);
  const MutexLock lock(mutex_);
  if (auto it = families_.find(name); it != families_.end()) {
    auto* existing = std::get_if<std::unique_ptr<Family<Series>>>(&it->second);
    if (existing == nullptr || (*existing)->label_names() != label_names) {
      throw std::invalid_argument(
          fmt::format("metric \"{}\" is already registered with another type or labels", name));
    }
    return **existing;
  }
  auto family = std::make_unique<Family<Series>>(std::string(name), std::string(help),
                                                 std::move(label_names), std::move(factory));
  Family<Series>& ref = *family;
  families_.emplace(std::string(name), std::move(family));
  return ref;
}

CounterFamily& MetricsRegistry::counter(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names) {
  return add<Counter>(name, help, std::move(label_names),
                      [] { return std::make_unique<Counter>(); });
}

GaugeFamily& MetricsRegistry::gauge(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names) {
  return add<Gauge>(name, help, std::move(label_names), [] { return std::make_unique<Gauge>(); });
}

HistogramFamily& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                            std::vector<double> upper_bounds,
                                            std::vector<std::string> label_names) {
  check_bounds(upper_bounds);
  return add<Histogram>(name, help, std::move(label_names), [bounds = std::move(upper_bounds)] {
    return std::make_unique<Histogram>(bounds);
  });
}

}  // namespace ic::observability
