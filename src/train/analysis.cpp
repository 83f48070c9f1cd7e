#include "train/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

#include "data/dataset.hpp"
#include "data/transform.hpp"
#include "models/zoo.hpp"
#include "records/metrics_file.hpp"
#include "train/checkpoint.hpp"
#include "train/power_iteration.hpp"

namespace tula::train {
namespace {

std::vector<std::pair<int64_t, double>> read_gradient_norms(const std::string& path) {
  std::vector<std::pair<int64_t, double>> out;
  if (path.empty()) return out;
  for (const auto& record : records::read_metrics_file(path)) {
    const auto* step = std::get_if<records::IterRecord>(&record);
    if (step && !step->skipped) out.emplace_back(step->step, std::sqrt(step->global_grad_sq));
  }
  return out;
}

}  // namespace

namespace {

// The samples every checkpoint is analyzed on: the first of the training set,
// transformed for evaluation as `tula train` would, and the model's input.
struct AnalysisInput {
  data::Batch batch;
  int64_t channels = 0, classes = 0, image_size = 0;
};

AnalysisInput analysis_input(const CheckpointState& first, const AnalysisOptions& o) {
  data::DatasetOptions d;
  d.name = first.dataset;
  d.data_dir = o.data_dir.empty() ? data::default_data_dir(first.dataset) : o.data_dir;
  d.seed = first.seed;
  const auto& in = first.input;
  if (in.is_object()) {  // synthetic data is rebuilt from what the run recorded
    d.synthetic_shape = {in.at("channels").get<int64_t>(), in.at("height").get<int64_t>(),
                         in.at("width").get<int64_t>()};
    d.synthetic_classes = in.at("classes").get<int64_t>();
    d.synthetic_size = in.value("synthetic_size", d.synthetic_size);
  }
  auto train_set = data::open_dataset(d, data::Split::kTrain);
  const auto shape = train_set->shape();
  AnalysisInput out;
  out.channels = shape.channels;
  out.classes = train_set->num_classes();
  // Older checkpoints do not record the input: rebuild it as tula train does.
  out.image_size = in.is_object() ? in.at("image_size").get<int64_t>()
                                  : models::input_size(first.model, 0, shape.height, shape.width);
  data::TransformOptions t;
  t.train = false;
  t.image_size = out.image_size == shape.height && out.image_size == shape.width ? 0 : out.image_size;
  if (first.dataset != "synthetic") {
    t.mean = train_set->channel_mean();
    t.std = train_set->channel_std();
  }
  std::vector<int64_t> indices(static_cast<size_t>(std::min(o.samples, train_set->size())));
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int64_t>(i);
  out.batch = data::apply_transform(train_set->gather(indices), t, 0);
  return out;
}

// The gradient norm and the Hessian's largest eigenvalue at one checkpoint.
HessianEstimate estimate_at(const std::string& path, const CheckpointState& first, const AnalysisInput& input,
                            const AnalysisOptions& o) {
  models::ModelOptions mo{input.channels, input.classes, input.image_size};
  auto model = models::make_model(first.model, mo);
  const auto state = load_model_from_checkpoint(path, *model);
  if (state.model != first.model || state.dataset != first.dataset) {
    throw std::runtime_error("analyze: " + path + " is " + state.model + " on " + state.dataset + ", not " +
                             first.model + " on " + first.dataset);
  }
  // Evaluation mode: no dropout and batch-norm with its running statistics,
  // so the loss is one deterministic function of the weights.
  model->eval();
  std::vector<torch::Tensor> params;
  for (auto& p : model->parameters()) {
    if (p.requires_grad()) params.push_back(p);
  }
  auto loss = torch::nn::functional::cross_entropy(model->forward(input.batch.images), input.batch.labels);
  auto grads = torch::autograd::grad({loss}, params, {}, /*retain_graph=*/true, /*create_graph=*/true);
  HessianEstimate h;
  h.checkpoint = path;
  h.step = state.global_step;
  h.loss = loss.item<double>();
  {
    torch::NoGradGuard no_grad;
    double g2 = 0.0;
    for (auto& g : grads) g2 += g.pow(2).sum().item<double>();
    h.gradient_norm = std::sqrt(g2);
  }
  torch::manual_seed(o.seed);
  TensorList start_vector;
  for (auto& p : params) start_vector.push_back(torch::randn_like(p));
  auto hessian_times = [&](const TensorList& v) {
    // Hv = d/dw (g . v), with v held constant.
    torch::Tensor gv = torch::zeros({}, loss.options());
    for (size_t i = 0; i < grads.size(); ++i) gv = gv + (grads[i] * v[i]).sum();
    auto hv = torch::autograd::grad({gv}, params, {}, /*retain_graph=*/true, /*create_graph=*/false);
    for (auto& x : hv) x = x.detach();
    return hv;
  };
  const auto found = power_iteration(hessian_times, std::move(start_vector), o.max_iterations, o.tolerance);
  h.iterations = found.iterations;
  h.converged = found.converged;
  h.eigenvalue = found.eigenvalue;
  return h;
}

}  // namespace

AnalysisResult analyze(const AnalysisOptions& o) {
  if (o.checkpoints.empty()) throw std::invalid_argument("analyze: no checkpoints given");
  if (o.samples < 1 || o.max_iterations < 1) throw std::invalid_argument("analyze: samples and iterations must be >= 1");
  if (o.threads > 0) torch::set_num_threads(static_cast<int>(o.threads));
  AnalysisResult result;
  result.gradient_norms = read_gradient_norms(o.metrics_path);
  const auto first = read_checkpoint_state(o.checkpoints.front());
  result.model = first.model;
  result.dataset = first.dataset;
  const auto input = analysis_input(first, o);
  for (const auto& path : o.checkpoints) result.hessian.push_back(estimate_at(path, first, input, o));
  std::sort(result.hessian.begin(), result.hessian.end(),
            [](const HessianEstimate& a, const HessianEstimate& b) { return a.step < b.step; });
  return result;
}

nlohmann::json AnalysisResult::to_json() const {
  nlohmann::json hs = nlohmann::json::array();
  for (const auto& h : hessian) {
    hs.push_back({{"checkpoint", h.checkpoint}, {"step", h.step}, {"eigenvalue", h.eigenvalue},
                  {"iterations", h.iterations}, {"converged", h.converged},
                  {"gradient_norm", h.gradient_norm}, {"loss", h.loss}});
  }
  nlohmann::json gs = nlohmann::json::array();
  for (const auto& [step, norm] : gradient_norms) gs.push_back({{"step", step}, {"gradient_norm", norm}});
  return {{"format", "tula-analysis"}, {"version", 1}, {"model", model}, {"dataset", dataset},
          {"gradient_norms", gs}, {"hessian", hs}};
}

}  // namespace tula::train
