#include "data/loader.hpp"

#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "data/rng.hpp"
#include "kernels/thread_limits.hpp"

namespace tula::data {

struct PrefetchLoader::State {
  std::shared_ptr<const Dataset> dataset;
  std::vector<int64_t> indices;
  LoaderOptions options;
  int64_t num_batches = 0;
  int64_t next_to_return = 0;  // consumer's position

  // Shared with the producer thread, under `mutex`.
  std::mutex mutex;
  std::condition_variable not_full;   // producer waits for room
  std::condition_variable not_empty;  // consumer waits for a batch
  std::deque<Batch> ready;
  bool producer_done = false;
  bool stop = false;
  std::exception_ptr error;
  std::thread producer;

  Batch prepare(int64_t batch_index) const {
    const torch::NoGradGuard no_grad;
    const int64_t begin = batch_index * options.batch_size;
    const int64_t end =
        std::min<int64_t>(begin + options.batch_size, static_cast<int64_t>(indices.size()));
    const std::vector<int64_t> chosen(indices.begin() + begin, indices.begin() + end);
    // One seed for the batch's random choices, made while decoding
    // (imagefolder's crops) or after (the transform's).
    const uint64_t seed = mix(options.seed, static_cast<uint64_t>(batch_index));
    auto gathered = options.bytes ? dataset->gather_bytes(chosen, seed) : dataset->gather_seeded(chosen, seed);
    auto batch = apply_transform(std::move(gathered), options.transform, seed);
    if (options.pin_memory) {
      batch.images = batch.images.pin_memory();
      batch.labels = batch.labels.pin_memory();
    }
    return batch;
  }

  void produce() {
    kernels::run_ops_on_this_thread_only();
    if (options.idle_priority) kernels::yield_cores_to_training();
    try {
      for (int64_t i = options.start_batch; i < num_batches; ++i) {
        {
          std::unique_lock lock(mutex);
          not_full.wait(
              lock, [&] { return stop || static_cast<int64_t>(ready.size()) < options.prefetch; });
          if (stop) return;
        }
        Batch batch = prepare(i);
        {
          const std::lock_guard lock(mutex);
          ready.push_back(std::move(batch));
        }
        not_empty.notify_one();
      }
    } catch (...) {
      const std::lock_guard lock(mutex);
      error = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex);
      producer_done = true;
    }
    not_empty.notify_one();
  }
};

PrefetchLoader::PrefetchLoader(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices,
                               LoaderOptions options)
    : state_(std::make_unique<State>()) {
  if (!dataset) throw std::invalid_argument("loader: no data set");
  if (options.batch_size <= 0) {
    throw std::invalid_argument(fmt::format("loader: batch_size must be positive, got {}", options.batch_size));
  }
  if (options.prefetch < 0) throw std::invalid_argument("loader: prefetch must be >= 0");
  const auto count = static_cast<int64_t>(indices.size());
  const int64_t batches = (count + options.batch_size - 1) / options.batch_size;
  if (options.start_batch < 0 || options.start_batch > batches) {
    throw std::invalid_argument(
        fmt::format("loader: start_batch {} out of range [0, {}]", options.start_batch, batches));
  }
  state_->dataset = std::move(dataset);
  state_->indices = std::move(indices);
  state_->options = std::move(options);
  state_->num_batches = batches;
  state_->next_to_return = state_->options.start_batch;
  if (state_->options.prefetch > 0 && state_->next_to_return < batches) {
    state_->producer = std::thread([state = state_.get()] { state->produce(); });
  }
}

PrefetchLoader::~PrefetchLoader() {
  if (state_->producer.joinable()) {
    {
      const std::lock_guard lock(state_->mutex);
      state_->stop = true;
    }
    state_->not_full.notify_all();
    state_->producer.join();
  }
}

int64_t PrefetchLoader::num_batches() const { return state_->num_batches; }

int64_t PrefetchLoader::remaining() const { return state_->num_batches - state_->next_to_return; }

std::optional<Batch> PrefetchLoader::next() {
  using Clock = std::chrono::steady_clock;
  State& s = *state_;
  last_wait_ = 0.0;
  if (s.next_to_return >= s.num_batches) return std::nullopt;
  const auto start = Clock::now();
  if (!s.producer.joinable()) {
    // Synchronous: the preparation itself is the time training waits.
    Batch batch = s.prepare(s.next_to_return);
    ++s.next_to_return;
    last_wait_ = std::chrono::duration<double>(Clock::now() - start).count();
    return batch;
  }
  std::unique_lock lock(s.mutex);
  s.not_empty.wait(lock, [&] { return !s.ready.empty() || s.producer_done; });
  last_wait_ = std::chrono::duration<double>(Clock::now() - start).count();
  // Batches finished before a failure are still delivered, in order.
  if (!s.ready.empty()) {
    Batch batch = std::move(s.ready.front());
    s.ready.pop_front();
    ++s.next_to_return;
    lock.unlock();
    s.not_full.notify_one();
    return batch;
  }
  if (s.error) std::rethrow_exception(s.error);
  return std::nullopt;
}

}  // namespace tula::data
