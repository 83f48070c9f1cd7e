// The distribution of per-tensor factors (LARS trust ratios, AGS scales) in
// one step, for the metrics stream: quantiles are what a person reads when
// asking "did the factors hit their bounds?".
#pragma once
#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::optim {

inline nlohmann::json summarize_factors(std::vector<double> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  auto at = [&](double q) { return values[static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5)]; };
  double sum = 0.0;
  for (double v : values) sum += v;
  return {{"min", values.front()}, {"p10", at(0.1)}, {"median", at(0.5)}, {"p90", at(0.9)},
          {"max", values.back()}, {"mean", sum / static_cast<double>(values.size())}};
}

}  // namespace tula::optim
