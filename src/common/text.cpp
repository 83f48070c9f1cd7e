#include "common/text.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

namespace tula::common {

std::string format_number(double v, int significant) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return format_number(s);
  const double a = std::abs(s);
  if (a < 1e-9) return "0 s";
  if (a < 1e-6) return format_number(s * 1e9, 3) + " ns";
  if (a < 1e-3) return format_number(s * 1e6, 3) + " us";
  if (a < 1) return format_number(s * 1e3, 3) + " ms";
  if (a < 120) return format_number(s, 3) + " s";
  if (a < 3600) return format_number(s / 60, 3) + " min";
  if (a < 48 * 3600) return format_number(s / 3600, 3) + " h";
  return format_number(s / 86400, 3) + " d";
}

std::string format_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::abs(b) >= 1024 && u < 4) b /= 1024, ++u;
  return format_number(b, 3) + " " + units[u];
}

std::string format_money(double usd) {
  if (!std::isfinite(usd)) return format_number(usd);
  char buf[64];
  if (std::abs(usd) < 0.01 && usd != 0) {
    std::snprintf(buf, sizeof buf, "$%.2g", usd);
  } else {
    std::snprintf(buf, sizeof buf, "$%.2f", usd);
  }
  return buf;
}


std::string percent(double fraction, int decimals) { return fmt::format("{:.{}f}%", 100 * fraction, decimals); }

std::string signed_percent(double fraction, int decimals) {
  return fmt::format("{:+.{}f}%", 100 * fraction, decimals);
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

ProgressMode progress_mode(const std::string& text, bool stderr_is_terminal) {
  if (text == "auto") return stderr_is_terminal ? ProgressMode::Bar : ProgressMode::Lines;
  if (text == "bar") return ProgressMode::Bar;
  if (text == "lines") return ProgressMode::Lines;
  if (text == "none") return ProgressMode::None;
  throw std::invalid_argument("unknown progress mode '" + text + "' (auto, bar, lines, none)");
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string iso_utc(double unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace tula::common
