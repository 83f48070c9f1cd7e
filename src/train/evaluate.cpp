#include "train/evaluate.hpp"

#include <chrono>

#include <torch/torch.h>

#include "common/stopwatch.hpp"

namespace tula::train {

EvalResult evaluate(models::Net& model, const std::shared_ptr<const data::Dataset>& test_set,
                    const data::TransformOptions& transform, int64_t batch_size, int rank, int world_size,
                    distributed::Communicator* comm, const torch::Device& device) {
  const auto start = std::chrono::steady_clock::now();
  torch::NoGradGuard no_grad;
  model.eval();
  std::vector<int64_t> indices;
  for (int64_t i = rank; i < test_set->size(); i += world_size) indices.push_back(i);
  double loss_sum = 0.0, correct = 0.0;
  for (size_t begin = 0; begin < indices.size(); begin += static_cast<size_t>(batch_size)) {
    const size_t end = std::min(indices.size(), begin + static_cast<size_t>(batch_size));
    std::vector<int64_t> chunk(indices.begin() + static_cast<std::ptrdiff_t>(begin),
                               indices.begin() + static_cast<std::ptrdiff_t>(end));
    auto batch = data::apply_transform(test_set->gather(chunk), transform, 0);
    auto images = batch.images.to(device);
    auto labels = batch.labels.to(device);
    auto logits = model.forward(images);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct += logits.argmax(1).eq(labels).sum().item<double>();
  }
  model.train();
  std::vector<double> totals = {loss_sum, correct, static_cast<double>(indices.size())};
  if (comm && world_size > 1) totals = comm->sum(totals);
  EvalResult result;
  result.samples = static_cast<int64_t>(totals[2]);
  result.loss = totals[0] / static_cast<double>(std::max<int64_t>(1, result.samples));
  result.accuracy = totals[1] / static_cast<double>(std::max<int64_t>(1, result.samples));
  result.seconds = common::since(start);
  return result;
}

}  // namespace tula::train
