#include "common/text.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

namespace tula::common {

std::string percent(double fraction, int decimals) { return fmt::format("{:.{}f}%", 100 * fraction, decimals); }

std::string signed_percent(double fraction, int decimals) {
  return fmt::format("{:+.{}f}%", 100 * fraction, decimals);
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
