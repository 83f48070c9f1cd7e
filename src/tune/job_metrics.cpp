#include "tune/job_metrics.hpp"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tula::tune {

JobMetrics::JobMetrics(std::string path) : path_(std::move(path)) {}

bool JobMetrics::poll() {
  if (!in_.is_open()) {
    in_.open(path_, std::ios::binary);
    if (!in_.is_open()) return false;  // not written yet
  }
  in_.clear();  // past EOF last time: the writer may have appended since
  bool any = false;
  char buffer[1 << 14];
  while (in_.read(buffer, sizeof buffer) || in_.gcount() > 0) {
    partial_.append(buffer, static_cast<size_t>(in_.gcount()));
    size_t start = 0;
    for (size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
      ++line_number_;
      take(partial_.substr(start, end - start));
      any = true;
    }
    partial_.erase(0, start);  // keep the line still being written
  }
  return any;
}

void JobMetrics::take(const std::string& line) {
  if (line.empty()) return;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path_ + ":" + std::to_string(line_number_) + ": not a JSON record (" + e.what() + ")");
  }
  const std::string type = j.value("type", "");
  const double time = j.value("time", 0.0);
  if (type == "start") {
    LaunchStart s;
    s.global_batch = j.value("global_batch", int64_t{0});
    s.workers = j.value("workers", int64_t{1});
    s.steps_per_epoch = j.value("steps_per_epoch", int64_t{0});
    s.train_samples = j.value("train_samples", int64_t{0});
    s.time = time;
    s.first_step_index = steps_.size();
    launches_.push_back(s);
  } else if (type == "iter") {
    StepMeasurement m;
    m.step = j.at("step").get<int64_t>();
    // Redone after a relaunch from an older checkpoint: the new ones count.
    while (!steps_.empty() && steps_.back().step >= m.step) steps_.pop_back();
    while (!evaluations_.empty() && evaluations_.back().step >= m.step) evaluations_.pop_back();
    if (!launches_.empty()) launches_.back().first_step_index = std::min(launches_.back().first_step_index, steps_.size());
    m.global_batch = j.value("global_batch", int64_t{0});
    m.workers = j.value("workers", int64_t{1});
    m.iter_s = j.value("iter_s", 0.0);
    m.local_grad_sq = j.value("local_grad_sq", 0.0);
    m.global_grad_sq = j.value("global_grad_sq", 0.0);
    m.skipped = j.value("skipped", false);
    m.time = time;
    m.samples = (steps_.empty() ? 0.0 : steps_.back().samples) + static_cast<double>(m.global_batch);
    steps_.push_back(m);
  } else if ((type == "eval" || type == "epoch") && j.contains("test_accuracy")) {
    EvaluationMeasurement e;
    e.step = j.value("step", int64_t{0});
    e.samples = samples();
    e.test_accuracy = j.at("test_accuracy").get<double>();
    e.test_loss = j.value("test_loss", 0.0);
    e.eval_s = j.value("eval_s", 0.0);
    e.time = time;
    evaluations_.push_back(e);
  }
}

std::optional<double> JobMetrics::best_accuracy() const {
  std::optional<double> best;
  for (const auto& e : evaluations_) best = std::max(best.value_or(0.0), e.test_accuracy);
  return best;
}

std::optional<double> JobMetrics::recent_iteration_s(size_t count, size_t at_least) const {
  if (launches_.empty()) return std::nullopt;
  const size_t first = std::min(launches_.back().first_step_index + 2, steps_.size());
  std::vector<double> times;
  for (size_t i = steps_.size(); i > first && times.size() < count; --i) {
    if (!steps_[i - 1].skipped) times.push_back(steps_[i - 1].iter_s);
  }
  if (times.size() < at_least) return std::nullopt;
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

std::vector<predict::NoiseSample> JobMetrics::noise_samples() const {
  std::vector<predict::NoiseSample> out;
  for (const auto& s : steps_) {
    if (s.skipped || s.workers < 2 || s.global_grad_sq <= 0 || s.local_grad_sq <= 0) continue;
    predict::NoiseSample n;
    n.step = s.step;
    n.global_batch = s.global_batch;
    n.local_batch = s.global_batch / s.workers;
    n.local_grad_sq = s.local_grad_sq;
    n.global_grad_sq = s.global_grad_sq;
    out.push_back(n);
  }
  return out;
}

}  // namespace tula::tune
