#include "service/request_metrics.hpp"

#include <fmt/format.h>

namespace tula::service {

void RequestMetrics::observe(const std::string& route, const std::string& method, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{route, method, status}];
  auto& h = latency_[route];
  ++h.count;
  h.sum += seconds;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++h.counts[i];
      break;
    }
  }
}

std::string RequestMetrics::prometheus() const {
  std::lock_guard lock(mutex_);
  // Numbers as a default stream writes them ({:g}: six significant digits), as they always were.
  std::string o =
      "# HELP tula_http_requests_total HTTP requests answered, by route pattern, method and status.\n"
      "# TYPE tula_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [route, method, status] = key;
    o += fmt::format("tula_http_requests_total{{route=\"{}\",method=\"{}\",code=\"{}\"}} {}\n", route, method,
                     status, n);
  }
  o += "# HELP tula_http_request_duration_seconds Time from reading a request to handing its answer over.\n"
       "# TYPE tula_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.counts[i];
      o += fmt::format("tula_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{:g}\"}} {}\n", route,
                       kBuckets[i], cumulative);
    }
    o += fmt::format("tula_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", route, h.count);
    o += fmt::format("tula_http_request_duration_seconds_sum{{route=\"{}\"}} {:g}\n", route, h.sum);
    o += fmt::format("tula_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", route, h.count);
  }
  return o;
}

}  // namespace tula::service
