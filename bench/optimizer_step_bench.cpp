// Optimizer steps alone, on a zoo model's parameters with fixed random
// gradients: the per-tensor update against the multi-tensor (foreach) one on
// this machine's CPU. Meant to run under `valgrind --tool=callgrind` (the
// instruction count of N steps does not depend on the machine's load) or
// with a wall clock, one intra-op thread.
//
//   tula_optimizer_step_bench --model resnet20 --optimizer sgd --update foreach [--steps 5] [--classes 10]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "models/zoo.hpp"
#include "optim/make_optimizer.hpp"

int main(int argc, char** argv) try {
  std::string model = "resnet20", optimizer = "sgd", update = "per-tensor";
  int64_t steps = 5, classes = 10, channels = 3, image_size = 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model") model = value;
    else if (flag == "--optimizer") optimizer = value;
    else if (flag == "--update") update = value;
    else if (flag == "--steps") steps = std::stoll(value);
    else if (flag == "--classes") classes = std::stoll(value);
    else if (flag == "--channels") channels = std::stoll(value);
    else if (flag == "--image-size") image_size = std::stoll(value);
    else throw std::invalid_argument("unknown flag " + flag);
  }
  torch::set_num_threads(1);
  torch::manual_seed(0);
  tula::models::ModelOptions mo;
  mo.classes = classes;
  mo.channels = channels;
  mo.image_size = image_size;
  auto net = tula::models::make_model(model, mo);
  std::vector<tula::optim::ParamRef> params;
  for (const auto& named : net->named_parameters()) {
    auto p = named.value();
    p.mutable_grad() = torch::randn_like(p) * 1e-2;
    params.push_back({named.key(), p, p.dim() <= 1});
  }
  tula::optim::OptimizerOptions o;
  o.name = optimizer;
  o.update = update;
  auto opt = tula::optim::make_optimizer(params, o, 128);
  tula::optim::StepStats stats;
  stats.local_batch = stats.global_batch = 128;
  opt->step(stats);  // the first step allocates the state
  const auto start = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < steps; ++s) {
    stats.step = s + 1;
    opt->step(stats);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"model\": \"%s\", \"optimizer\": \"%s\", \"update\": \"%s\", \"tensors\": %zu, \"steps\": %lld, "
              "\"ms_per_step\": %.4f}\n",
              model.c_str(), optimizer.c_str(), update.c_str(), params.size(), static_cast<long long>(steps),
              1e3 * seconds / static_cast<double>(steps));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "tula_optimizer_step_bench: %s\n", e.what());
  return 2;
}
