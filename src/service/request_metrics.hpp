// The server's own numbers for Prometheus: requests by route, method and
// status, and a latency histogram per route. No LibTorch here.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace tula::service {

class RequestMetrics {
 public:
  // `route` is the pattern ("/v1/jobs/{id}"), never the raw path, so the
  // number of series stays bounded.
  void observe(const std::string& route, const std::string& method, int status, double seconds);
  // The text exposition format (version 0.0.4) of every series.
  std::string prometheus() const;

  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1,    2.5};

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};  // per bucket (not cumulative)
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
};

}  // namespace tula::service
