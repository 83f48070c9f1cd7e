#include "optim/lr_rules.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace tula::optim {

void validate(const LrScaling& s) {
  if (s.rule != "none" && s.rule != "linear" && s.rule != "sqrt") {
    throw std::invalid_argument("unknown learning-rate scaling '" + s.rule + "' (none, linear, sqrt)");
  }
  if (s.reference_batch <= 0) throw std::invalid_argument("reference batch must be > 0");
}

ScheduleOptions scaled_schedule(ScheduleOptions base, const LrScaling& s, int64_t global_batch) {
  const double k = static_cast<double>(global_batch) / static_cast<double>(s.reference_batch);
  if (s.rule == "linear") base.base_lr *= k;
  if (s.rule == "sqrt") base.base_lr *= std::sqrt(k);
  if (s.legw) base.warmup_epochs = std::min(base.warmup_epochs * k, base.total_epochs);
  return base;
}

BatchSchedule BatchSchedule::parse(const std::string& text) {
  BatchSchedule schedule;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto colon = item.find(':');
    size_t used_epoch = 0, used_batch = 0;
    int64_t epoch = -1, batch = 0;
    try {
      if (colon == std::string::npos) throw std::invalid_argument("no colon");
      const std::string e = item.substr(0, colon), b = item.substr(colon + 1);
      epoch = std::stoll(e, &used_epoch);
      batch = std::stoll(b, &used_batch);
      if (used_epoch != e.size() || used_batch != b.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw std::invalid_argument("batch schedule: '" + item + "' is not epoch:global_batch (e.g. \"0:256,5:1024\")");
    }
    if (epoch < 0) throw std::invalid_argument(fmt::format("batch schedule: epoch {} is negative", epoch));
    if (batch <= 0) throw std::invalid_argument("batch schedule: global batch must be > 0 in '" + item + "'");
    if (!schedule.entries_.empty() && epoch <= schedule.entries_.back().first) {
      throw std::invalid_argument("batch schedule: epochs must increase ('" + item + "')");
    }
    schedule.entries_.emplace_back(epoch, batch);
  }
  if (schedule.entries_.empty()) throw std::invalid_argument("batch schedule: empty");
  return schedule;
}

int64_t BatchSchedule::global_batch_at(int64_t epoch, int64_t fallback) const {
  int64_t batch = fallback;
  for (const auto& [first, b] : entries_) {
    if (epoch >= first) batch = b;
  }
  return batch;
}

double LrTransition::learning_rate(int64_t step, double epoch) const {
  const double target = optim::learning_rate(to, epoch);
  if (window <= 0 || step >= start_step + window) return target;
  const double alpha = std::clamp(static_cast<double>(step - start_step) / static_cast<double>(window), 0.0, 1.0);
  return (1 - alpha) * optim::learning_rate(from, epoch) + alpha * target;
}

}  // namespace tula::optim
