// A few threads that decode one gather's files side by side. The calling
// thread is one of them, so a pool of n threads has n - 1 helpers, and a
// gather never waits for a helper that another gather keeps busy.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

namespace tula::data {

class DecodePool {
 public:
  // `threads` >= 1 decoding at once (1: the calling thread alone); the
  // helpers in the idle scheduling class when idle_priority (see
  // kernels/thread_limits.hpp).
  DecodePool(int64_t threads, bool idle_priority);
  ~DecodePool();  // joins the helpers
  DecodePool(const DecodePool&) = delete;
  DecodePool& operator=(const DecodePool&) = delete;

  // Calls task(i) once for each i in [0, count) and returns when all have
  // returned. If some throw, the others still run, and the exception of the
  // lowest such i is rethrown (so the error reported does not depend on
  // which thread was faster). Safe to call from several threads at once.
  void for_each(int64_t count, const std::function<void(int64_t)>& task);

  int64_t threads() const;  // counting the calling thread

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The decoding threads a data set uses when not told: as many as the machine
// has hardware threads, at most 4 (decoding a batch of small crops does not
// need more, and training wants the cores).
int64_t default_decode_threads();

}  // namespace tula::data
