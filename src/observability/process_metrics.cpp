#include "observability/process_metrics.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace ic::observability {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ProcessSample> parse_proc_stat(std::string_view stat, double ticks_per_second,
                                             double page_bytes, double boot_time) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are counted
  // from the last ')'. Field 3 (state) is the first after it.
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || ticks_per_second <= 0) return std::nullopt;
  std::vector<std::string_view> fields;
  std::size_t pos = close + 1;
  while (pos < stat.size()) {
    while (pos < stat.size() && (stat[pos] == ' ' || stat[pos] == '\n')) ++pos;
    const std::size_t end = stat.find_first_of(" \n", pos);
    if (pos < stat.size()) fields.push_back(stat.substr(pos, end - pos));
    pos = end == std::string_view::npos ? stat.size() : end;
  }
  // fields[0] is field 3; field n is fields[n - 3].
  const auto field = [&](std::size_t n) -> std::optional<double> {
    return n - 3 < fields.size() ? number(fields[n - 3]) : std::nullopt;
  };
  const auto utime = field(14), stime = field(15), start = field(22), vsize = field(23),
             rss = field(24);
  if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
  return ProcessSample{.cpu_seconds = (*utime + *stime) / ticks_per_second,
                       .resident_bytes = *rss * page_bytes,
                       .virtual_bytes = *vsize,
                       .start_time_seconds = boot_time + *start / ticks_per_second};
}

std::optional<double> parse_boot_time(std::string_view proc_stat) {
  constexpr std::string_view kKey = "\nbtime ";
  const std::size_t at = proc_stat.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t begin = at + kKey.size();
  return number(proc_stat.substr(begin, proc_stat.find('\n', begin) - begin));
}

std::string render_process_metrics(const ProcessSample& sample) {
  std::string out;
  const auto put = [&out](std::string_view name, std::string_view type, std::string_view help,
                          double value) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, value);
  };
  put("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
      sample.cpu_seconds);
  put("process_max_fds", "gauge", "Maximum number of open file descriptors.", sample.max_fds);
  put("process_open_fds", "gauge", "Number of open file descriptors.", sample.open_fds);
  put("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
      sample.resident_bytes);
  put("process_start_time_seconds", "gauge",
      "Start time of the process since unix epoch in seconds.", sample.start_time_seconds);
  put("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
      sample.virtual_bytes);
  return out;
}

std::string process_metrics_text() {
  const auto boot = parse_boot_time(read_file("/proc/stat"));
  auto sample =
      parse_proc_stat(read_file("/proc/self/stat"), static_cast<double>(sysconf(_SC_CLK_TCK)),
                      static_cast<double>(sysconf(_SC_PAGESIZE)), boot.value_or(0));
  if (!sample || !boot) return {};
  std::error_code error;
  for (std::filesystem::directory_iterator it("/proc/self/fd", error), end; !error && it != end;
       it.increment(error)) {
    ++sample->open_fds;
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) sample->max_fds = static_cast<double>(limit.rlim_cur);
  return render_process_metrics(*sample);
}

}  // namespace ic::observability
