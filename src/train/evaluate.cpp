#include "train/evaluate.hpp"

#include <chrono>
#include <vector>

#include <torch/torch.h>

#include "common/stopwatch.hpp"

namespace tula::train {

namespace {

// This rank's shard: every world_size-th sample from its rank on.
std::vector<int64_t> shard_of(int64_t size, int rank, int world_size) {
  std::vector<int64_t> indices;
  for (int64_t i = rank; i < size; i += world_size) indices.push_back(i);
  return indices;
}

struct BatchScore {
  double loss_sum = 0.0, correct = 0.0;
};

// One batch of the shard, indices [begin, end), through the model in eval mode.
BatchScore score_batch(models::Net& model, const data::Dataset& set, const std::vector<int64_t>& indices,
                       size_t begin, size_t end, const data::TransformOptions& transform, const torch::Device& device) {
  std::vector<int64_t> chunk(indices.begin() + static_cast<std::ptrdiff_t>(begin),
                             indices.begin() + static_cast<std::ptrdiff_t>(end));
  auto batch = data::apply_transform(set.gather(chunk), transform, 0);
  auto images = batch.images.to(device);
  auto labels = batch.labels.to(device);
  auto logits = model.forward(images);
  BatchScore score;
  score.loss_sum = torch::nn::functional::cross_entropy(
                       logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                       .item<double>();
  score.correct = logits.argmax(1).eq(labels).sum().item<double>();
  return score;
}

}  // namespace

EvalResult evaluate(models::Net& model, const std::shared_ptr<const data::Dataset>& test_set,
                    const data::TransformOptions& transform, int64_t batch_size, int rank, int world_size,
                    distributed::Communicator* comm, const torch::Device& device) {
  const auto start = std::chrono::steady_clock::now();
  torch::NoGradGuard no_grad;
  model.eval();
  const auto indices = shard_of(test_set->size(), rank, world_size);
  double loss_sum = 0.0, correct = 0.0;
  for (size_t begin = 0; begin < indices.size(); begin += static_cast<size_t>(batch_size)) {
    const size_t end = std::min(indices.size(), begin + static_cast<size_t>(batch_size));
    const auto score = score_batch(model, *test_set, indices, begin, end, transform, device);
    loss_sum += score.loss_sum;
    correct += score.correct;
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

void warm_up_evaluation(models::Net& model, const std::shared_ptr<const data::Dataset>& test_set,
                        const data::TransformOptions& transform, int64_t batch_size, int rank, int world_size,
                        const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model.eval();
  const auto indices = shard_of(test_set->size(), rank, world_size);
  const size_t batch = static_cast<size_t>(batch_size);
  if (!indices.empty()) score_batch(model, *test_set, indices, 0, std::min(indices.size(), batch), transform, device);
  // The last batch is shorter unless the shard divides evenly: a shape of its own.
  if (const size_t tail = indices.size() % batch; tail != 0 && indices.size() > batch) {
    score_batch(model, *test_set, indices, indices.size() - tail, indices.size(), transform, device);
  }
  model.train();
}

}  // namespace tula::train
