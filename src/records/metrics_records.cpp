#include "records/metrics_records.hpp"

#include <set>

#include "records/record_error.hpp"

namespace tula::records {

using nlohmann::json;

namespace {

// Reads `key` into `out` when present; absent keys keep the struct's default
// (older files lack newer keys). A present key of the wrong type throws.
template <typename T>
void read(const json& j, const char* key, T& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  out = it->get<T>();
}

void write_evaluation(json& j, const Evaluation& e) {
  j["test_loss"] = e.test_loss;
  j["test_accuracy"] = e.test_accuracy;
  j["eval_s"] = e.eval_s;
  j["train_s"] = e.train_s;
}

Evaluation read_evaluation(const json& j) {
  Evaluation e;
  read(j, "test_loss", e.test_loss);
  read(j, "test_accuracy", e.test_accuracy);
  read(j, "eval_s", e.eval_s);
  read(j, "train_s", e.train_s);
  return e;
}

json write(const StartRecord& r) {
  json j = {{"type", "start"},
            {"model", r.model},
            {"dataset", r.dataset},
            {"parameters", r.parameters},
            {"workers", r.workers},
            {"batch_size", r.batch_size},
            {"accumulation_steps", r.accumulation_steps},
            {"global_batch", r.global_batch},
            {"steps_per_epoch", r.steps_per_epoch},
            {"optimizer", r.optimizer},
            {"lr_scaling", r.lr_scaling},
            {"reference_batch", r.reference_batch},
            {"batch_schedule", r.batch_schedule},
            {"threads", r.compute.threads},
            {"backend", r.compute.backend},
            {"device", r.compute.device},
            {"rendezvous", r.compute.rendezvous},
            {"math_library", r.compute.math_library},
            {"precision", r.compute.precision},
            {"channels_last", r.compute.channels_last},
            {"cudnn_benchmark", r.compute.cudnn_benchmark},
            {"train_samples", r.train_samples},
            {"evaluated_on", r.evaluated_on},
            {"evaluation_samples", r.evaluation_samples}};
  if (!r.data_source.is_null()) j["data_source"] = r.data_source;
  return j;
}

StartRecord read_start(const json& j) {
  StartRecord r;
  read(j, "model", r.model);
  read(j, "dataset", r.dataset);
  read(j, "parameters", r.parameters);
  read(j, "workers", r.workers);
  read(j, "batch_size", r.batch_size);
  read(j, "accumulation_steps", r.accumulation_steps);
  read(j, "global_batch", r.global_batch);
  read(j, "steps_per_epoch", r.steps_per_epoch);
  read(j, "optimizer", r.optimizer);
  read(j, "lr_scaling", r.lr_scaling);
  read(j, "reference_batch", r.reference_batch);
  read(j, "batch_schedule", r.batch_schedule);
  read(j, "threads", r.compute.threads);
  read(j, "backend", r.compute.backend);
  read(j, "device", r.compute.device);
  read(j, "rendezvous", r.compute.rendezvous);
  read(j, "math_library", r.compute.math_library);
  read(j, "precision", r.compute.precision);
  read(j, "channels_last", r.compute.channels_last);
  read(j, "cudnn_benchmark", r.compute.cudnn_benchmark);
  read(j, "train_samples", r.train_samples);
  read(j, "evaluated_on", r.evaluated_on);
  read(j, "evaluation_samples", r.evaluation_samples);
  return r;
}

json write(const IterRecord& r) {
  json j = {{"type", "iter"},
            {"epoch", r.epoch},
            {"step", r.step},
            {"step_in_epoch", r.step_in_epoch},
            {"global_batch", r.global_batch},
            {"workers", r.workers},
            {"loss", r.loss},
            {"lr", r.lr},
            {"data_wait_s", r.times.data_wait_s},
            {"compute_s", r.times.compute_s},
            {"comm_exposed_s", r.times.comm_exposed_s},
            {"comm_busy_s", r.times.comm_busy_s},
            {"comm_hidden_fraction", r.times.comm_hidden_fraction},
            {"optimizer_s", r.times.optimizer_s},
            {"iter_s", r.times.iter_s},
            {"samples_per_s", r.times.samples_per_s},
            {"local_grad_sq", r.local_grad_sq},
            {"global_grad_sq", r.global_grad_sq},
            {"peak_rss_bytes", r.peak_rss_bytes}};
  if (r.probe_batch > 0) j["probe_batch"] = r.probe_batch;
  if (r.skipped) j["skipped"] = true;
  if (!r.skipped && r.optimizer_terms.is_object()) j.update(r.optimizer_terms);
  return j;
}

IterRecord read_iter(const json& j) {
  IterRecord r;
  if (!j.contains("step")) throw json::other_error::create(501, "an iter record needs \"step\"", &j);
  read(j, "epoch", r.epoch);
  read(j, "step", r.step);
  read(j, "step_in_epoch", r.step_in_epoch);
  read(j, "global_batch", r.global_batch);
  read(j, "workers", r.workers);
  read(j, "loss", r.loss);
  read(j, "lr", r.lr);
  read(j, "data_wait_s", r.times.data_wait_s);
  read(j, "compute_s", r.times.compute_s);
  read(j, "comm_exposed_s", r.times.comm_exposed_s);
  read(j, "comm_busy_s", r.times.comm_busy_s);
  read(j, "comm_hidden_fraction", r.times.comm_hidden_fraction);
  read(j, "optimizer_s", r.times.optimizer_s);
  read(j, "iter_s", r.times.iter_s);
  read(j, "samples_per_s", r.times.samples_per_s);
  read(j, "local_grad_sq", r.local_grad_sq);
  read(j, "global_grad_sq", r.global_grad_sq);
  read(j, "peak_rss_bytes", r.peak_rss_bytes);
  read(j, "probe_batch", r.probe_batch);
  read(j, "skipped", r.skipped);
  // The rest is what the optimizer wrote beside them.
  static const std::set<std::string> kKnown = {
      "type", "time", "epoch", "step", "step_in_epoch", "global_batch", "workers", "loss", "lr", "data_wait_s",
      "compute_s", "comm_exposed_s", "comm_busy_s", "comm_hidden_fraction", "optimizer_s", "iter_s", "samples_per_s",
      "local_grad_sq", "global_grad_sq", "peak_rss_bytes", "probe_batch", "skipped"};
  for (const auto& [key, value] : j.items()) {
    if (!kKnown.contains(key)) r.optimizer_terms[key] = value;
  }
  return r;
}

json write(const TensorsRecord& r) { return {{"type", "tensors"}, {"step", r.step}, {"tensors", r.tensors}}; }

TensorsRecord read_tensors(const json& j) {
  TensorsRecord r;
  read(j, "step", r.step);
  if (j.contains("tensors")) r.tensors = j.at("tensors");
  return r;
}

json write(const EvalRecord& r) {
  json j = {{"type", "eval"}, {"epoch", r.epoch}, {"step", r.step}};
  write_evaluation(j, r.evaluation);
  return j;
}

EvalRecord read_eval(const json& j) {
  EvalRecord r;
  read(j, "epoch", r.epoch);
  read(j, "step", r.step);
  r.evaluation = read_evaluation(j);
  return r;
}

json write(const EpochRecord& r) {
  json j = {{"type", "epoch"},          {"epoch", r.epoch},       {"step", r.step},
            {"global_batch", r.global_batch}, {"workers", r.workers}, {"train_loss", r.train_loss},
            {"epoch_s", r.epoch_s},     {"lr", r.lr},             {"peak_rss_bytes", r.peak_rss_bytes}};
  if (r.evaluation) write_evaluation(j, *r.evaluation);
  if (r.bad_images) j["bad_images"] = *r.bad_images;
  return j;
}

EpochRecord read_epoch(const json& j) {
  EpochRecord r;
  read(j, "epoch", r.epoch);
  read(j, "step", r.step);
  read(j, "global_batch", r.global_batch);
  read(j, "workers", r.workers);
  read(j, "train_loss", r.train_loss);
  read(j, "epoch_s", r.epoch_s);
  read(j, "lr", r.lr);
  read(j, "peak_rss_bytes", r.peak_rss_bytes);
  if (j.contains("test_accuracy")) r.evaluation = read_evaluation(j);
  if (j.contains("bad_images")) {
    int64_t bad = 0;
    read(j, "bad_images", bad);
    r.bad_images = bad;
  }
  return r;
}

json write(const ResizeRecord& r) {
  return {{"type", "resize"},
          {"step", r.step},
          {"from_global_batch", r.from_global_batch},
          {"to_global_batch", r.to_global_batch},
          {"lr_transition_steps", r.lr_transition_steps},
          {"reason", r.reason}};
}

ResizeRecord read_resize(const json& j) {
  ResizeRecord r;
  read(j, "step", r.step);
  read(j, "from_global_batch", r.from_global_batch);
  read(j, "to_global_batch", r.to_global_batch);
  read(j, "lr_transition_steps", r.lr_transition_steps);
  read(j, "reason", r.reason);
  return r;
}

json write(const StoppedRecord& r) {
  return {{"type", "stopped"},   {"step", r.step},     {"epoch", r.epoch}, {"step_in_epoch", r.step_in_epoch},
          {"signal", r.signal}, {"checkpointed", r.checkpointed}};
}

StoppedRecord read_stopped(const json& j) {
  StoppedRecord r;
  read(j, "step", r.step);
  read(j, "epoch", r.epoch);
  read(j, "step_in_epoch", r.step_in_epoch);
  read(j, "signal", r.signal);
  read(j, "checkpointed", r.checkpointed);
  return r;
}

json write(const FinalTestRecord& r) {
  json j = {{"type", "final_test"}, {"step", r.step}, {"samples", r.samples}};
  write_evaluation(j, r.evaluation);
  return j;
}

FinalTestRecord read_final_test(const json& j) {
  FinalTestRecord r;
  read(j, "step", r.step);
  read(j, "samples", r.samples);
  r.evaluation = read_evaluation(j);
  return r;
}

}  // namespace

const char* record_type(const MetricsRecord& record) {
  static constexpr const char* kTypes[] = {"start", "iter",   "tensors", "eval",
                                           "epoch", "resize", "stopped", "final_test"};
  static_assert(std::size(kTypes) == std::variant_size_v<MetricsRecord>);
  return kTypes[record.index()];
}

json to_json(const MetricsRecord& record) {
  json j = std::visit([](const auto& r) { return write(r); }, record);
  const double time = std::visit([](const auto& r) { return r.time; }, record);
  if (time > 0) j["time"] = time;
  return j;
}

std::optional<MetricsRecord> metrics_record_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw RecordError(where + ": a metrics record must be a JSON object");
  try {
    const auto type_it = j.find("type");
    if (type_it == j.end() || !type_it->is_string()) throw RecordError(where + ": a metrics record needs a \"type\"");
    const std::string& type = type_it->get_ref<const std::string&>();
    std::optional<MetricsRecord> out;
    if (type == "start") out = read_start(j);
    else if (type == "iter") out = read_iter(j);
    else if (type == "tensors") out = read_tensors(j);
    else if (type == "eval") out = read_eval(j);
    else if (type == "epoch") out = read_epoch(j);
    else if (type == "resize") out = read_resize(j);
    else if (type == "stopped") out = read_stopped(j);
    else if (type == "final_test") out = read_final_test(j);
    else return std::nullopt;
    double time = 0;
    read(j, "time", time);
    std::visit([time](auto& r) { r.time = time; }, *out);
    return out;
  } catch (const json::exception& e) {
    throw RecordError(where + ": " + e.what());
  }
}

std::optional<StepEvaluation> evaluation_of(const MetricsRecord& record) {
  if (const auto* e = std::get_if<EvalRecord>(&record)) return StepEvaluation{e->step, e->evaluation, e->time};
  if (const auto* e = std::get_if<EpochRecord>(&record); e && e->evaluation) {
    return StepEvaluation{e->step, *e->evaluation, e->time};
  }
  return std::nullopt;
}

std::optional<int64_t> step_of(const MetricsRecord& record) {
  if (std::holds_alternative<StartRecord>(record)) return std::nullopt;
  return std::visit(
      [](const auto& r) -> std::optional<int64_t> {
        if constexpr (requires { r.step; }) return r.step;
        return std::nullopt;
      },
      record);
}

}  // namespace tula::records
