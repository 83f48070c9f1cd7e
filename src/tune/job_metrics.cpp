#include "tune/job_metrics.hpp"

#include <algorithm>

#include "predict/noise_scale.hpp"

namespace tula::tune {

bool JobMetrics::poll() {
  const auto records = tail_.read_new();
  for (const auto& r : records) take(r);
  return !records.empty();
}

EvaluationMeasurement JobMetrics::measured(int64_t step, const records::Evaluation& e, double time) const {
  EvaluationMeasurement m;
  m.step = step;
  m.samples = samples();
  m.test_accuracy = e.test_accuracy;
  m.test_loss = e.test_loss;
  m.eval_s = e.eval_s;
  m.time = time;
  return m;
}

void JobMetrics::take(const records::MetricsRecord& record) {
  if (const auto* start = std::get_if<records::StartRecord>(&record)) {
    LaunchStart s;
    s.global_batch = start->global_batch;
    s.workers = start->workers;
    s.steps_per_epoch = start->steps_per_epoch;
    s.train_samples = start->train_samples;
    s.evaluated_on = start->evaluated_on;
    s.time = start->time;
    s.first_step_index = steps_.size();
    launches_.push_back(s);
  } else if (const auto* iter = std::get_if<records::IterRecord>(&record)) {
    StepMeasurement m;
    m.step = iter->step;
    // Redone after a relaunch from an older checkpoint: the new ones count.
    while (!steps_.empty() && steps_.back().step >= m.step) steps_.pop_back();
    while (!evaluations_.empty() && evaluations_.back().step >= m.step) evaluations_.pop_back();
    if (!launches_.empty()) launches_.back().first_step_index = std::min(launches_.back().first_step_index, steps_.size());
    m.global_batch = iter->global_batch;
    m.workers = iter->workers;
    m.iter_s = iter->times.iter_s;
    m.comm_exposed_s = iter->times.comm_exposed_s;
    m.comm_busy_s = iter->times.comm_busy_s;
    m.loss = iter->loss;
    m.local_grad_sq = iter->local_grad_sq;
    m.global_grad_sq = iter->global_grad_sq;
    m.skipped = iter->skipped;
    m.time = iter->time;
    m.noise = predict::noise_sample_of(*iter);
    m.samples = (steps_.empty() ? 0.0 : steps_.back().samples) + static_cast<double>(m.global_batch);
    steps_.push_back(m);
  } else if (const auto e = records::evaluation_of(record)) {
    evaluations_.push_back(measured(e->step, e->evaluation, e->time));
  } else if (const auto* final_test = std::get_if<records::FinalTestRecord>(&record)) {
    final_test_ = measured(final_test->step, final_test->evaluation, final_test->time);
  }
}

std::optional<double> JobMetrics::best_accuracy() const {
  std::optional<double> best;
  for (const auto& e : evaluations_) best = std::max(best.value_or(0.0), e.test_accuracy);
  return best;
}

std::vector<StepMeasurement> JobMetrics::recent_steps(size_t count, size_t at_least) const {
  if (launches_.empty()) return {};
  const size_t first = std::min(launches_.back().first_step_index + 2, steps_.size());
  std::vector<StepMeasurement> recent;
  for (size_t i = steps_.size(); i > first && recent.size() < count; --i) {
    if (!steps_[i - 1].skipped) recent.push_back(steps_[i - 1]);
  }
  if (recent.size() < at_least) return {};
  return recent;
}

std::vector<double> JobMetrics::recent_iteration_times(size_t count, size_t at_least) const {
  std::vector<double> times;
  for (const auto& s : recent_steps(count, at_least)) times.push_back(s.iter_s);
  return times;
}

std::vector<predict::NoiseSample> JobMetrics::noise_samples() const {
  std::vector<predict::NoiseSample> out;
  for (const auto& s : steps_)
    if (s.noise) out.push_back(*s.noise);
  return out;
}

}  // namespace tula::tune
