#include "predict/report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::predict {

using common::format_bytes;
using common::format_money;
using common::format_number;
using common::format_seconds;

nlohmann::json to_json(const Interval& i) { return {{"estimate", i.estimate}, {"lo", i.lo}, {"hi", i.hi}}; }

nlohmann::json to_json(const Prediction& p) {
  return {{"machine", p.machine.name},
          {"relative_speed", p.machine.relative_speed},  // on the profiled device's speed, as applied
          {"nodes", p.config.nodes},
          {"workers_per_node", p.config.workers_per_node},
          {"workers", p.workers},
          {"batch_per_worker", p.config.batch_per_worker},
          {"accumulation_steps", p.config.accumulation_steps},
          {"global_batch", p.global_batch},
          {"max_batch_per_worker", p.max_batch_per_worker},
          {"to_target", p.to_target},
          {"target_accuracy", p.target_accuracy},
          {"level", p.level},
          {"compute_s", to_json(p.per_step.compute_s)},
          {"allreduce_s", to_json(p.per_step.allreduce_s)},
          {"exposed_comm_s", to_json(p.per_step.exposed_comm_s)},
          {"input_wait_s", to_json(p.per_step.input_wait_s)},
          {"iteration_s", to_json(p.per_step.iteration_s)},
          {"epoch_s", to_json(p.epoch_s)},
          {"eval_s", to_json(p.eval_s)},
          {"final_test_s", to_json(p.final_test_s)},
          {"memory_bytes", to_json(p.memory_bytes)},
          {"steps", to_json(p.steps)},
          {"epochs", to_json(p.epochs)},
          {"time_s", to_json(p.time_s)},
          {"cost", to_json(p.cost)},
          {"notes", p.notes}};
}

std::string format_prediction(const Prediction& p) {
  const int pct = static_cast<int>(std::lround(p.level * 100));
  std::string o = fmt::format("{}: {} node(s) x {} worker(s), batch {} per worker", p.machine.name, p.config.nodes,
                              p.config.workers_per_node, p.config.batch_per_worker);
  if (p.config.accumulation_steps > 1) o += fmt::format(" x {} accumulation steps", p.config.accumulation_steps);
  o += fmt::format(" = global batch {}\n", p.global_batch);
  auto row = [&](const std::string& name, const Interval& i, std::string (*show)(double)) {
    o += fmt::format("  {:<26}{:<12} [{}, {}]\n", name, show(i.estimate), show(i.lo), show(i.hi));
  };
  auto count = [](double v) { return format_number(v, 4); };
  auto secs = [&](const std::string& name, const Interval& i) { row(name, i, format_seconds); };
  o += fmt::format("  ({}% intervals from the fits' parameter uncertainty)\n", pct);
  secs("forward+backward", p.per_step.compute_s);
  secs("allreduce (all buckets)", p.per_step.allreduce_s);
  secs("exposed communication", p.per_step.exposed_comm_s);
  if (p.per_step.input_wait_s.hi > 0) secs("waiting for input", p.per_step.input_wait_s);
  secs("iteration", p.per_step.iteration_s);
  secs("evaluation", p.eval_s);
  if (p.final_test_s.hi > 0) secs("final test (once)", p.final_test_s);
  secs("epoch", p.epoch_s);
  row("memory per worker", p.memory_bytes, format_bytes);
  o += fmt::format("  {:<26}{}\n", "largest batch that fits", p.max_batch_per_worker);
  if (p.to_target) {
    row("steps to " + format_number(100 * p.target_accuracy, 3) + "% accuracy", p.steps, count);
    row("epochs to target", p.epochs, count);
    secs("time to accuracy", p.time_s);
  } else {
    secs("time for " + format_number(p.epochs.estimate, 3) + " epoch(s)", p.time_s);
  }
  row("cost", p.cost, format_money);
  for (const auto& n : p.notes) o += "  note: " + n + "\n";
  return o;
}

}  // namespace tula::predict
