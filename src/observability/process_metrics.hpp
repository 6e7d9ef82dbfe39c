// The standard process_* metrics of Prometheus client libraries, read from Linux's /proc at
// scrape time: an adapter of the operating system, kept out of everything else.
//
//   registry.add_collector(process_metrics_text);   // appended to every /metrics render
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ic::observability {

struct ProcessSample {
  double cpu_seconds = 0;  // user + system
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time_seconds = 0;  // since the Unix epoch
  double open_fds = 0;
  double max_fds = 0;
};

// From /proc/self/stat's text, the clock ticks per second, the page size and the boot time
// (btime of /proc/stat, epoch seconds). nullopt when the text is not a stat line.
[[nodiscard]] std::optional<ProcessSample> parse_proc_stat(std::string_view stat,
                                                           double ticks_per_second,
                                                           double page_bytes, double boot_time);
// btime from /proc/stat's text.
[[nodiscard]] std::optional<double> parse_boot_time(std::string_view proc_stat);

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds, in Prometheus text.
[[nodiscard]] std::string render_process_metrics(const ProcessSample& sample);

// Reads /proc for this process and renders it; empty when /proc cannot be read (then the
// metrics are absent rather than wrong). Thread-safety: reentrant.
[[nodiscard]] std::string process_metrics_text();

}  // namespace ic::observability
