// How a training job is laid out: nodes, workers on each, the micro-batch one
// worker computes at once and the micro-batches an optimizer step accumulates.
// One type from the planner (predict::Config names it there) through the
// runner to tune.json and the report, so the batch is never re-typed.
#pragma once
#include <cstdint>

namespace tula::common {

struct Layout {
  int64_t nodes = 1;
  int64_t workers_per_node = 1;
  int64_t batch_per_worker = 1;    // the micro-batch one worker computes at once
  int64_t accumulation_steps = 1;  // micro-batches per optimizer step

  int64_t workers() const { return nodes * workers_per_node; }
  int64_t global_batch() const { return workers() * batch_per_worker * accumulation_steps; }
  bool operator==(const Layout&) const = default;
};

}  // namespace tula::common
