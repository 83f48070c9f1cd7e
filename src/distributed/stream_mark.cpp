#include "distributed/stream_mark.hpp"

#include <chrono>
#include <stdexcept>

#ifdef TULA_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace tula::distributed {
namespace {

class HostMark : public StreamMark {
 public:
  double seconds_since(const StreamMark& origin) const override {
    const auto& o = dynamic_cast<const HostMark&>(origin);
    return std::chrono::duration<double>(time_ - o.time_).count();
  }

 private:
  std::chrono::steady_clock::time_point time_ = std::chrono::steady_clock::now();
};

#ifdef TULA_HAVE_CUDA
// An event with timing (at::cuda::CUDAEvent's default has none) on the
// device's current stream.
class CudaMark : public StreamMark {
 public:
  explicit CudaMark(const torch::Device& device) : event_(cudaEventDefault) {
    event_.record(at::cuda::getCurrentCUDAStream(device.index()));
  }
  double seconds_since(const StreamMark& origin) const override {
    const auto& o = dynamic_cast<const CudaMark&>(origin);
    o.event_.synchronize();
    event_.synchronize();
    return static_cast<double>(o.event_.elapsed_time(event_)) / 1000.0;
  }

 private:
  at::cuda::CUDAEvent event_;
};
#endif

}  // namespace

std::shared_ptr<StreamMark> mark_stream(const torch::Device& device) {
#ifdef TULA_HAVE_CUDA
  if (device.is_cuda()) return std::make_shared<CudaMark>(device);
#endif
  if (device.is_cuda()) throw std::logic_error("a CUDA device in a tula built without CUDA");
  return std::make_shared<HostMark>();
}

}  // namespace tula::distributed
