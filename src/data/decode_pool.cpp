#include "data/decode_pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kernels/thread_limits.hpp"

namespace tula::data {
namespace {

// One for_each call: its items are claimed one at a time by whoever is free.
struct Job {
  const std::function<void(int64_t)>* task = nullptr;
  int64_t count = 0;
  int64_t next = 0;      // the next item to claim
  int64_t finished = 0;  // items done
  int64_t failed_at = -1;
  std::exception_ptr error;
  std::condition_variable done;
};

}  // namespace

struct DecodePool::State {
  std::mutex mutex;
  std::condition_variable work;  // helpers wait here for a job with items left
  std::deque<Job*> jobs;         // jobs with items not yet claimed
  bool stop = false;
  std::vector<std::thread> helpers;

  // Claims an item of the first job with any left; false if none. Under `lock`.
  bool claim(Job*& job, int64_t& item) {
    while (!jobs.empty() && jobs.front()->next >= jobs.front()->count) jobs.pop_front();
    if (jobs.empty()) return false;
    job = jobs.front();
    item = job->next++;
    return true;
  }

  // Runs one item with the lock released; records its outcome under `lock`.
  void run(std::unique_lock<std::mutex>& lock, Job* job, int64_t item) {
    lock.unlock();
    std::exception_ptr error;
    try {
      (*job->task)(item);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && (job->failed_at < 0 || item < job->failed_at)) {
      job->failed_at = item;
      job->error = error;
    }
    if (++job->finished == job->count) job->done.notify_all();
  }

  void help(bool idle_priority) {
    kernels::run_ops_on_this_thread_only();
    if (idle_priority) kernels::yield_cores_to_training();
    std::unique_lock lock(mutex);
    while (true) {
      Job* job = nullptr;
      int64_t item = 0;
      work.wait(lock, [&] { return stop || claim(job, item); });
      if (job == nullptr) return;  // stopping, nothing claimed
      run(lock, job, item);
    }
  }
};

DecodePool::DecodePool(int64_t threads, bool idle_priority) : state_(std::make_unique<State>()) {
  if (threads < 1) throw std::invalid_argument(fmt::format("decode threads must be >= 1, got {}", threads));
  for (int64_t i = 1; i < threads; ++i) {
    state_->helpers.emplace_back([s = state_.get(), idle_priority] { s->help(idle_priority); });
  }
}

DecodePool::~DecodePool() {
  {
    const std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->work.notify_all();
  for (auto& t : state_->helpers) t.join();
}

int64_t DecodePool::threads() const { return static_cast<int64_t>(state_->helpers.size()) + 1; }

void DecodePool::for_each(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  Job job;
  job.task = &task;
  job.count = count;
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.jobs.push_back(&job);
  s.work.notify_all();
  // Work on this job (and only this one: another caller's items could be
  // slow, and this caller should return as soon as its own are done).
  while (job.next < job.count) {
    const int64_t item = job.next++;
    s.run(lock, &job, item);
  }
  // The last items may still run on helpers; `job` lives on this stack until
  // they finish, and leaves the queue before it goes.
  job.done.wait(lock, [&] { return job.finished == job.count; });
  std::erase(s.jobs, &job);
  if (job.error) std::rethrow_exception(job.error);
}

int64_t default_decode_threads() {
  const auto hardware = static_cast<int64_t>(std::thread::hardware_concurrency());
  return std::clamp<int64_t>(hardware, 1, 4);
}

}  // namespace tula::data
