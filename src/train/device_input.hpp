// Where a training batch's images become what the model takes. A batch of
// floats (prepared whole on the loader's thread) is copied to the device as
// it is. A batch of bytes (uint8, --input-dtype uint8) is copied as bytes, a
// quarter of the traffic, and converted on the device: to float in [0, 1],
// resized when the model takes another size, normalized by the channel
// statistics, by the same functions the loader's transform uses
// (data/transform.hpp), so both give the same values.
//
// On CUDA a batch's copy and conversion are issued on a side stream when it
// is staged, and the training stream waits for them (an event, no host
// synchronization) only when it takes the batch: staging the next batch
// before computing the current one keeps a batch in flight during compute.
// On the CPU staging only holds the batch; taking it converts.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "data/dataset.hpp"

namespace tula::train {

// The type a batch's pixels travel to the device in.
enum class InputDtype { kFloat32, kUint8 };

// "float32", "uint8", or "auto": uint8 on CUDA, float32 on the CPU (where the
// conversion would move from the loader's thread onto the training one).
// Throws std::invalid_argument naming the choices.
InputDtype resolve_input_dtype(const std::string& name, const torch::Device& device);
const char* input_dtype_name(InputDtype dtype);

struct DeviceInputOptions {
  torch::Device device = torch::kCPU;
  // For batches of bytes only (a float batch comes resized and normalized):
  int64_t image_size = 0;   // 0: keep the batch's size; else resize to it
  std::vector<double> mean;  // empty: no normalization
  std::vector<double> std;
};

// `batch` on the options' device, its images converted there when they are
// bytes; synchronous with respect to the current stream.
data::Batch to_device(const data::Batch& batch, const DeviceInputOptions& options);

class DeviceInput {
 public:
  explicit DeviceInput(DeviceInputOptions options);
  ~DeviceInput();
  DeviceInput(const DeviceInput&) = delete;
  DeviceInput& operator=(const DeviceInput&) = delete;

  // Begins moving `batch` to the device. One batch is staged at a time:
  // staging another before take() throws std::logic_error.
  void stage(data::Batch batch);
  bool staged() const;
  // The staged batch, ready on the device's current stream; throws
  // std::logic_error when none is staged.
  data::Batch take();

 private:
  struct Pending;
  DeviceInputOptions options_;
  std::unique_ptr<Pending> pending_;
};

}  // namespace tula::train
