#include "train/weight_average.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

namespace tula::train {

WeightAverage::WeightAverage(torch::nn::Module& model, double decay) : decay_(decay) {
  if (!(decay > 0 && decay < 1)) throw std::invalid_argument("weight average: the decay must be in (0, 1)");
  torch::NoGradGuard no_grad;
  for (const auto& p : model.parameters()) live_.push_back(p);
  // Integer buffers (batch norm's batch count) are counts, not weights.
  for (const auto& b : model.buffers()) {
    if (b.is_floating_point()) live_.push_back(b);
  }
  for (const auto& t : live_) average_.push_back(t.detach().clone());
}

double WeightAverage::decay_at(int64_t global_step) const {
  const auto t = static_cast<double>(std::max<int64_t>(global_step, 0));
  return std::min(decay_, (1 + t) / (10 + t));
}

void WeightAverage::update(int64_t global_step) {
  torch::NoGradGuard no_grad;
  const double d = decay_at(global_step);
  for (size_t i = 0; i < live_.size(); ++i) average_[i].mul_(d).add_(live_[i].detach(), 1 - d);
}

void WeightAverage::reset() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < live_.size(); ++i) average_[i].copy_(live_[i].detach());
}

WeightAverage::Swapped::Swapped(WeightAverage& average) : average_(average) {
  torch::NoGradGuard no_grad;
  own_.reserve(average_.live_.size());
  for (size_t i = 0; i < average_.live_.size(); ++i) {
    own_.push_back(average_.live_[i].detach().clone());
    average_.live_[i].detach().copy_(average_.average_[i]);
  }
}

WeightAverage::Swapped::~Swapped() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < own_.size(); ++i) average_.live_[i].detach().copy_(own_[i]);
}

void WeightAverage::save(torch::serialize::OutputArchive& archive) const {
  for (size_t i = 0; i < average_.size(); ++i) archive.write(std::to_string(i), average_[i]);
}

void WeightAverage::load(torch::serialize::InputArchive& archive) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < average_.size(); ++i) {
    torch::Tensor t;
    archive.read(std::to_string(i), t);
    if (!t.sizes().equals(average_[i].sizes())) {
      throw std::runtime_error("the averaged weights' tensor " + std::to_string(i) + " does not match the model's");
    }
    average_[i].copy_(t);
  }
}

}  // namespace tula::train
