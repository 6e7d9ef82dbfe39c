// MetricsRegistry::render: the Prometheus text exposition format 0.0.4.
// https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
#include <fmt/core.h>

#include <cmath>

#include "observability/metrics.hpp"

namespace ic::observability {
namespace {

// HELP text escapes backslash and newline; label values also escape the double quote.
std::string escape(std::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// {a="x",b="y"} with an optional trailing extra label (the histogram's le); empty without labels.
std::string label_set(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      std::string_view extra_name = {}, std::string_view extra_value = {}) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", names[i], escape(values[i], true));
  }
  if (!extra_name.empty()) {
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", extra_name, extra_value);
  }
  return out.empty() ? out : "{" + out + "}";
}

template <class Series>
void header(std::string& out, const Family<Series>& family, std::string_view type) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family.name(), escape(family.help(), false),
                     family.name(), type);
}

void render_family(std::string& out, const CounterFamily& family) {
  header(out, family, "counter");
  family.for_each([&](const std::vector<std::string>& values, const Counter& series) {
    out += fmt::format("{}{} {}\n", family.name(), label_set(family.label_names(), values),
                       series.value());
  });
}

void render_family(std::string& out, const GaugeFamily& family) {
  header(out, family, "gauge");
  family.for_each([&](const std::vector<std::string>& values, const Gauge& series) {
    out += fmt::format("{}{} {}\n", family.name(), label_set(family.label_names(), values),
                       number(series.value()));
  });
}

void render_family(std::string& out, const HistogramFamily& family) {
  header(out, family, "histogram");
  const auto& names = family.label_names();
  family.for_each([&](const std::vector<std::string>& values, const Histogram& series) {
    const Histogram::Snapshot snap = series.snapshot();
    const auto bounds = series.upper_bounds();
    for (std::size_t i = 0; i < snap.cumulative.size(); ++i) {
      const std::string le = i < bounds.size() ? number(bounds[i]) : "+Inf";
      out += fmt::format("{}_bucket{} {}\n", family.name(), label_set(names, values, "le", le),
                         snap.cumulative[i]);
    }
    const std::string labels = label_set(names, values);
    out += fmt::format("{}_sum{} {}\n", family.name(), labels, number(snap.sum));
    out += fmt::format("{}_count{} {}\n", family.name(), labels, snap.cumulative.back());
  });
}

}  // namespace

std::string MetricsRegistry::render() const {
  std::string out;
  const MutexLock lock(mutex_);
  for (const auto& [name, family] : families_) {
    std::visit([&](const auto& f) { render_family(out, *f); }, family);
  }
  for (const Collector& collector : collectors_) out += collector();
  return out;
}

void MetricsRegistry::add_collector(Collector collector) {
  const MutexLock lock(mutex_);
  collectors_.push_back(std::move(collector));
}

}  // namespace ic::observability
