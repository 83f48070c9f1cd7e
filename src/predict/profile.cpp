#include "predict/profile.hpp"

#include <set>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "predict/error.hpp"
#include "predict/json_fields.hpp"

namespace tula::predict {

namespace jf = json_fields;
using nlohmann::json;

namespace {

std::vector<double> optional_times(const json& j, const std::string& key, const std::string& path) {
  if (!jf::has(j, key)) return {};
  if (j.at(key).is_array() && j.at(key).empty()) return {};
  return jf::positive_numbers(j, key, path);
}

// A compute sample's bucket_ready_fraction: shares of a step, in order.
std::vector<double> read_ready_fractions(const json& e, const std::string& at) {
  const std::string path = jf::join(at, "bucket_ready_fraction");
  if (!jf::has(e, "bucket_ready_fraction")) return {};
  const auto& a = e.at("bucket_ready_fraction");
  if (!a.is_array()) throw ProfileError(path + ": must be an array");
  std::vector<double> out;
  for (const auto& v : a) {
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1)) {
      throw ProfileError(path + ": each must be a share of the step in [0, 1]");
    }
    if (!out.empty() && v.get<double>() < out.back()) {
      throw ProfileError(path + ": buckets launch in order, so the shares cannot decrease");
    }
    out.push_back(v.get<double>());
  }
  return out;
}

template <typename T, typename F>
std::vector<T> read_samples(const json& samples, const std::string& key, bool required, F&& read_one) {
  const std::string path = jf::join("samples", key);
  if (!jf::has(samples, key)) {
    if (required) throw ProfileError(path + ": missing");
    return {};
  }
  const auto& arr = jf::array(samples, key, "samples");
  std::vector<T> out;
  out.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto here = jf::at(path, i);
    if (!arr[i].is_object()) throw ProfileError(here + ": must be an object");
    out.push_back(read_one(arr[i], here));
  }
  return out;
}

void check_version(const json& j) {
  const auto format = jf::text(j, "format", "");
  if (format != kProfileFormat) {
    throw ProfileError("format: is '" + format + "', expected '" + kProfileFormat + "'");
  }
  const auto version = jf::integer(j, "version", "", 0);
  if (version < kProfileVersion) {
    throw ProfileError(fmt::format("version: profile format version {} is older than this tula reads ({}); re-run "
                                   "`tula profile` to measure again",
                                   version, kProfileVersion));
  }
  if (version > kProfileVersion) {
    throw ProfileError(fmt::format("version: profile format version {} is newer than this tula reads ({}); update tula",
                                   version, kProfileVersion));
  }
}

void read_model(const json& j, Profile& p) {
  const auto& m = jf::object(j, "model", "");
  p.model.name = jf::text(m, "name", "model");
  p.model.parameters = jf::integer(m, "parameters", "model", 1);
  p.model.gradient_bytes = jf::integer(m, "gradient_bytes", "model", 1);
  if (m.contains("bucket_bytes")) {
    const auto& buckets = m.at("bucket_bytes");
    int64_t total = 0;
    if (!buckets.is_array() || buckets.empty()) throw ProfileError("model.bucket_bytes: must be a non-empty array");
    for (const auto& b : buckets) {
      if (!b.is_number_integer() || b.get<int64_t>() < 1) {
        throw ProfileError("model.bucket_bytes: each bucket must be a positive whole number of bytes");
      }
      p.model.bucket_bytes.push_back(b.get<int64_t>());
      total += p.model.bucket_bytes.back();
    }
    if (total != p.model.gradient_bytes) {
      throw ProfileError(fmt::format("model.bucket_bytes: the buckets hold {} bytes, gradient_bytes says {}", total,
                                     p.model.gradient_bytes));
    }
  }

}

void read_data(const json& j, Profile& p) {
  const auto& d = jf::object(j, "data", "");
  p.data.name = jf::text(d, "name", "data");
  p.data.train_samples = jf::integer(d, "train_samples", "data", 1);
  p.data.test_samples = jf::integer_or(d, "test_samples", "data", 0, 0);
  p.data.decoded_bytes_per_sample = jf::number_or(d, "decoded_bytes_per_sample", "data", 0.0, 0.0);
  if (jf::has(d, "input_shape")) {
    const auto& shape = jf::array(d, "input_shape", "data");
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!shape[i].is_number_integer() || shape[i].get<int64_t>() < 1) {
        throw ProfileError(jf::at("data.input_shape", i) + ": must be a positive integer");
      }
      p.data.input_shape.push_back(shape[i].get<int64_t>());
    }
  }

}

void read_hardware(const json& j, Profile& p) {
  const auto& h = jf::object(j, "hardware", "");
  p.hardware.cpu_model = jf::text(h, "cpu_model", "hardware");
  p.hardware.cores = jf::integer(h, "cores", "hardware", 1);
  p.hardware.hostname = jf::text_or(h, "hostname", "hardware", "");
  p.hardware.math_library = jf::text_or(h, "math_library", "hardware", "");
  const auto& dev = jf::object(h, "device", "hardware");
  p.hardware.device.kind = jf::text(dev, "kind", "hardware.device");
  p.hardware.device.name = jf::text_or(dev, "name", "hardware.device", "");
  p.hardware.device.memory_bytes = jf::integer(dev, "memory_bytes", "hardware.device", 1);
  p.hardware.device.count = jf::integer_or(dev, "count", "hardware.device", 1, 1);

}

// One reader per kind of measured sample: `e` is the sample's object, `at`
// its path for errors.

ComputeSample read_compute(const json& e, const std::string& at) {
  ComputeSample c;
  c.batch_per_worker = jf::integer(e, "batch_per_worker", at, 1);
  c.workers_per_node = jf::integer_or(e, "workers_per_node", at, 1, 1);
  c.forward_backward_s = jf::positive_numbers(e, "forward_backward_s", at);
  c.optimizer_s = optional_times(e, "optimizer_s", at);
  c.bucket_ready_fraction = read_ready_fractions(e, at);
  return c;
}

AllreduceSample read_allreduce(const json& e, const std::string& at) {
  AllreduceSample a;
  a.workers = jf::integer(e, "workers", at, 2);
  a.bytes = jf::integer(e, "bytes", at, 1);
  a.seconds = jf::positive_numbers(e, "seconds", at);
  return a;
}

MemorySample read_memory(const json& e, const std::string& at) {
  MemorySample mem;
  mem.batch = jf::integer(e, "batch", at, 1);
  mem.bytes = jf::integer(e, "bytes", at, 1);
  return mem;
}

OverlapSample read_overlap(const json& e, const std::string& at) {
  OverlapSample o;
  o.workers = jf::integer(e, "workers", at, 2);
  o.workers_per_node = jf::integer_or(e, "workers_per_node", at, 1, 1);
  o.batch_per_worker = jf::integer(e, "batch_per_worker", at, 1);
  o.hidden_fraction = jf::number(e, "hidden_fraction", at, 0.0);
  if (o.hidden_fraction > 1) throw ProfileError(jf::join(at, "hidden_fraction") + ": must be in [0, 1]");
  o.step_s = optional_times(e, "step_s", at);
  return o;
}

EvaluationSample read_evaluation(const json& e, const std::string& at) {
  EvaluationSample ev;
  ev.workers = jf::integer_or(e, "workers", at, 1, 1);
  ev.samples = jf::integer(e, "samples", at, 1);
  ev.seconds = jf::positive_numbers(e, "seconds", at);
  return ev;
}

LoaderSample read_loader(const json& e, const std::string& at) {
  LoaderSample l;
  l.batch = jf::integer(e, "batch", at, 1);
  l.threads = jf::integer_or(e, "threads", at, 1, 1);
  l.seconds = jf::positive_numbers(e, "seconds", at);
  return l;
}

InputStepSample read_input_step(const json& e, const std::string& at) {
  InputStepSample t;
  t.batch = jf::integer(e, "batch", at, 1);
  t.step_s = jf::positive_numbers(e, "step_s", at);
  t.compute_s = optional_times(e, "compute_s", at);
  return t;
}

NoiseSample read_noise(const json& e, const std::string& at) {
  NoiseSample n;
  n.step = jf::integer_or(e, "step", at, 0, 0);
  n.local_batch = jf::integer(e, "local_batch", at, 1);
  n.global_batch = jf::integer(e, "global_batch", at, 1);
  if (n.global_batch < n.local_batch) throw ProfileError(jf::join(at, "global_batch") + ": below local_batch");
  n.local_grad_sq = jf::number(e, "local_grad_sq", at, 0.0);
  n.global_grad_sq = jf::number(e, "global_grad_sq", at, 0.0);
  return n;
}

// A pilot's step time, evaluation and layout must agree with each other and
// with its global batch.
void check_pilot(const PilotRun& r, const std::string& at) {
  if (r.seconds_per_step > 0 && (r.workers < 1 || r.batch_per_worker < 1)) {
    throw ProfileError(jf::join(at, "seconds_per_step") + ": needs workers and batch_per_worker");
  }
  if (r.eval_s > 0 && r.workers < 1) throw ProfileError(jf::join(at, "eval_s") + ": needs workers");
  if (r.workers > 0 && r.batch_per_worker > 0 &&
      r.workers * r.batch_per_worker * r.accumulation_steps != r.global_batch) {
    throw ProfileError(jf::join(at, "workers") + ": workers x batch_per_worker x accumulation_steps is not global_batch");
  }
}

PilotRun read_pilot(const json& e, const std::string& at) {
  PilotRun r;
  r.global_batch = jf::integer(e, "global_batch", at, 1);
  r.steps_to_target = jf::positive_numbers(e, "steps_to_target", at);
  // The step time and layout are optional (profiles before them lack them).
  r.seconds_per_step = jf::number_or(e, "seconds_per_step", at, 0.0, 0.0);
  r.comm_exposed_s = jf::number_or(e, "comm_exposed_s", at, 0.0, -1.0);
  r.comm_busy_s = jf::number_or(e, "comm_busy_s", at, 0.0, -1.0);
  if (r.comm_exposed_s >= 0 && r.comm_exposed_s > r.seconds_per_step) {
    throw ProfileError(jf::join(at, "comm_exposed_s") + ": more than seconds_per_step, of which it is a part");
  }
  r.eval_s = jf::number_or(e, "eval_s", at, 0.0, 0.0);
  r.workers = jf::integer_or(e, "workers", at, 0, 0);
  r.batch_per_worker = jf::integer_or(e, "batch_per_worker", at, 0, 0);
  r.accumulation_steps = jf::integer_or(e, "accumulation_steps", at, 1, 1);
  check_pilot(r, at);
  return r;
}

// The measured samples: compute, allreduce and memory are required, the rest optional.
void read_all_samples(const json& j, Profile& p) {
  const auto& s = jf::object(j, "samples", "");
  p.compute = read_samples<ComputeSample>(s, "compute", true, read_compute);
  p.allreduce = read_samples<AllreduceSample>(s, "allreduce", true, read_allreduce);
  p.memory = read_samples<MemorySample>(s, "memory", true, read_memory);
  p.overlap = read_samples<OverlapSample>(s, "overlap", false, read_overlap);
  p.evaluation = read_samples<EvaluationSample>(s, "evaluation", false, read_evaluation);
  p.loader = read_samples<LoaderSample>(s, "loader", false, read_loader);
  p.input_steps = read_samples<InputStepSample>(s, "input_steps", false, read_input_step);
  p.gradient_noise = read_samples<NoiseSample>(s, "gradient_noise", false, read_noise);
  p.pilots = read_samples<PilotRun>(s, "pilots", false, read_pilot);
}

}  // namespace

Profile profile_from_json(const json& j) {
  if (!j.is_object()) throw ProfileError("profile: must be a JSON object");
  check_version(j);
  Profile p;
  p.created = jf::text_or(j, "created", "", "");
  p.precision = jf::text_or(j, "precision", "", "fp32");
  if (p.precision != "fp32" && p.precision != "bf16" && p.precision != "fp16") {
    throw ProfileError("precision: '" + p.precision + "' is not fp32, bf16 or fp16");
  }
  read_model(j, p);
  read_data(j, p);
  read_hardware(j, p);
  if (jf::has(j, "buckets")) {
    const auto& b = jf::object(j, "buckets", "");
    p.buckets.bucket_bytes = jf::integer_or(b, "bucket_bytes", "buckets", 1, p.buckets.bucket_bytes);
    p.buckets.first_bucket_bytes = jf::integer_or(b, "first_bucket_bytes", "buckets", 1, p.buckets.first_bucket_bytes);
  }
  p.target_accuracy = jf::number_or(j, "target_accuracy", "", 0.0, 0.0);
  if (p.target_accuracy > 1) throw ProfileError("target_accuracy: must be a fraction in [0, 1]");
  read_all_samples(j, p);
  for (size_t i = 0; i < p.compute.size(); ++i) {
    const auto& ready = p.compute[i].bucket_ready_fraction;
    if (!ready.empty() && ready.size() != p.model.bucket_bytes.size()) {
      throw ProfileError(fmt::format("samples.compute[{}].bucket_ready_fraction: {} shares for the {} buckets of "
                                     "model.bucket_bytes",
                                     i, ready.size(), p.model.bucket_bytes.size()));
    }
  }
  if (!p.pilots.empty() && p.target_accuracy <= 0) {
    throw ProfileError("target_accuracy: missing; samples.pilots needs the accuracy they were run to");
  }
  if (jf::has(j, "fitted")) {
    if (!j.at("fitted").is_object()) throw ProfileError("fitted: must be an object");
    p.fitted = j.at("fitted");
  }
  check_minimum_samples(p);
  return p;
}

void check_minimum_samples(const Profile& p) {
  std::set<int64_t> batches, mem_batches;
  for (const auto& c : p.compute) {
    if (c.workers_per_node == 1) batches.insert(c.batch_per_worker);
  }
  if (static_cast<int>(batches.size()) < kMinComputePoints) {
    throw ProfileError(fmt::format("samples.compute: {} distinct per-worker batch sizes with one worker per node; at "
                                   "least {} are needed to fit t_c(b) = a + c b with its uncertainty",
                                   batches.size(), kMinComputePoints));
  }
  std::set<std::pair<int64_t, int64_t>> ar;
  for (const auto& a : p.allreduce) ar.insert({a.workers, a.bytes});
  if (static_cast<int>(ar.size()) < kMinAllreducePoints) {
    throw ProfileError(fmt::format("samples.allreduce: {} distinct (workers, bytes) points; at least {} are needed "
                                   "to fit latency and bandwidth with their uncertainty",
                                   ar.size(), kMinAllreducePoints));
  }
  for (const auto& m : p.memory) mem_batches.insert(m.batch);
  if (static_cast<int>(mem_batches.size()) < kMinMemoryPoints) {
    throw ProfileError(fmt::format("samples.memory: {} distinct batch sizes; at least {} are needed to fit M(b) = "
                                   "M_static + m_act b with its uncertainty",
                                   mem_batches.size(), kMinMemoryPoints));
  }
}

Profile parse_profile(const std::string& text) {
  return profile_from_json(jf::parse_document<ProfileError>(text, "profile"));
}

Profile load_profile(const std::string& path) {
  return jf::parse_file<ProfileError>(path, "profile", parse_profile);
}

namespace {

// The writers, one per part of the file: what the readers above read back.

json model_json(const ModelInfo& m) {
  json out = {{"name", m.name}, {"parameters", m.parameters}, {"gradient_bytes", m.gradient_bytes}};
  if (!m.bucket_bytes.empty()) out["bucket_bytes"] = m.bucket_bytes;
  return out;
}

json data_json(const DataInfo& d) {
  json out = {{"name", d.name}, {"train_samples", d.train_samples}, {"test_samples", d.test_samples}};
  if (!d.input_shape.empty()) out["input_shape"] = d.input_shape;
  if (d.decoded_bytes_per_sample > 0) out["decoded_bytes_per_sample"] = d.decoded_bytes_per_sample;
  return out;
}

json hardware_json(const HardwareInfo& h) {
  json out = {{"cpu_model", h.cpu_model},
              {"cores", h.cores},
              {"device",
               {{"kind", h.device.kind},
                {"name", h.device.name},
                {"memory_bytes", h.device.memory_bytes},
                {"count", h.device.count}}}};
  if (!h.hostname.empty()) out["hostname"] = h.hostname;
  if (!h.math_library.empty()) out["math_library"] = h.math_library;
  return out;
}

json compute_json(const ComputeSample& c) {
  json e = {{"batch_per_worker", c.batch_per_worker},
            {"workers_per_node", c.workers_per_node},
            {"forward_backward_s", c.forward_backward_s}};
  if (!c.optimizer_s.empty()) e["optimizer_s"] = c.optimizer_s;
  if (!c.bucket_ready_fraction.empty()) e["bucket_ready_fraction"] = c.bucket_ready_fraction;
  return e;
}

json allreduce_json(const AllreduceSample& a) {
  return {{"workers", a.workers}, {"bytes", a.bytes}, {"seconds", a.seconds}};
}

json memory_json(const MemorySample& m) { return {{"batch", m.batch}, {"bytes", m.bytes}}; }

json overlap_json(const OverlapSample& o) {
  json e = {{"workers", o.workers},
            {"workers_per_node", o.workers_per_node},
            {"batch_per_worker", o.batch_per_worker},
            {"hidden_fraction", o.hidden_fraction}};
  if (!o.step_s.empty()) e["step_s"] = o.step_s;
  return e;
}

json evaluation_json(const EvaluationSample& e) {
  return {{"workers", e.workers}, {"samples", e.samples}, {"seconds", e.seconds}};
}

json loader_json(const LoaderSample& l) { return {{"batch", l.batch}, {"threads", l.threads}, {"seconds", l.seconds}}; }

json input_step_json(const InputStepSample& t) {
  json e = {{"batch", t.batch}, {"step_s", t.step_s}};
  if (!t.compute_s.empty()) e["compute_s"] = t.compute_s;
  return e;
}

json noise_json(const NoiseSample& n) {
  return {{"step", n.step},
          {"local_batch", n.local_batch},
          {"global_batch", n.global_batch},
          {"local_grad_sq", n.local_grad_sq},
          {"global_grad_sq", n.global_grad_sq}};
}

// The layout goes with the step time (all of it) or the evaluation (its
// workers): the reader requires it for them (check_pilot). A pilot with
// neither is written without it.
json pilot_json(const PilotRun& r) {
  json e = {{"global_batch", r.global_batch}, {"steps_to_target", r.steps_to_target}};
  if (r.seconds_per_step > 0) {
    e["workers"] = r.workers;
    e["batch_per_worker"] = r.batch_per_worker;
    e["accumulation_steps"] = r.accumulation_steps;
    e["seconds_per_step"] = r.seconds_per_step;
    if (r.comm_exposed_s >= 0) e["comm_exposed_s"] = r.comm_exposed_s;
    if (r.comm_busy_s >= 0) e["comm_busy_s"] = r.comm_busy_s;
  }
  if (r.eval_s > 0) {
    e["workers"] = r.workers;
    e["eval_s"] = r.eval_s;
  }
  return e;
}

// A JSON array of `write` applied to each sample.
template <typename T, typename F>
json array_of(const std::vector<T>& samples, F&& write) {
  json out = json::array();
  for (const auto& sample : samples) out.push_back(write(sample));
  return out;
}

json samples_json(const Profile& p) {
  json s = json::object();
  s["compute"] = array_of(p.compute, compute_json);
  s["allreduce"] = array_of(p.allreduce, allreduce_json);
  s["memory"] = array_of(p.memory, memory_json);
  s["overlap"] = array_of(p.overlap, overlap_json);
  s["evaluation"] = array_of(p.evaluation, evaluation_json);
  // Written only when measured, so profiles without them read back as they were.
  if (!p.loader.empty()) s["loader"] = array_of(p.loader, loader_json);
  if (!p.input_steps.empty()) s["input_steps"] = array_of(p.input_steps, input_step_json);
  s["gradient_noise"] = array_of(p.gradient_noise, noise_json);
  s["pilots"] = array_of(p.pilots, pilot_json);
  return s;
}

}  // namespace

json to_json(const Profile& p) {
  json j;
  j["format"] = kProfileFormat;
  j["version"] = kProfileVersion;
  if (!p.created.empty()) j["created"] = p.created;
  if (p.precision != "fp32") j["precision"] = p.precision;  // fp32 profiles are written as before
  j["model"] = model_json(p.model);
  j["data"] = data_json(p.data);
  j["hardware"] = hardware_json(p.hardware);
  j["buckets"] = {{"bucket_bytes", p.buckets.bucket_bytes}, {"first_bucket_bytes", p.buckets.first_bucket_bytes}};
  if (p.target_accuracy > 0) j["target_accuracy"] = p.target_accuracy;
  j["samples"] = samples_json(p);
  if (!p.fitted.is_null()) j["fitted"] = p.fitted;
  return j;
}

void save_profile(const Profile& p, const std::string& path) {
  common::write_file_atomically(path, to_json(p).dump(2) + "\n");
}

std::string device_name(const HardwareInfo& h) {
  return h.device.name.empty() && h.device.kind == "cpu" ? h.cpu_model : h.device.name;
}

}  // namespace tula::predict
