// A point on the timeline of the device the collectives run on, so that the
// reducer's busy, exposed and hidden times mean the same on a GPU as on the
// CPU. On the CPU (Gloo on host tensors) it is the host clock when it was
// taken, as before. On CUDA it is an event recorded on the current stream:
// reached when the GPU has done the work queued before it. Taken inside a
// collective's completion callback, the current stream is one that waits on
// the collective's own end (c10's CUDA-aware future runs callbacks on such
// streams), which is where NCCL's work ends; the host clock there would say
// only when the collective was queued.
#pragma once
#include <memory>

#include <torch/types.h>

namespace tula::distributed {

class StreamMark {
 public:
  virtual ~StreamMark() = default;
  // Seconds from `origin` (a mark of the same device) to this mark; on CUDA
  // it waits until the GPU has reached both.
  virtual double seconds_since(const StreamMark& origin) const = 0;
};

// A mark now on `device`'s current stream (the host clock for a CPU device).
// Throws std::logic_error for a CUDA device in a build without CUDA.
std::shared_ptr<StreamMark> mark_stream(const torch::Device& device);

}  // namespace tula::distributed
