// A data set whose images sit in memory as uint8 [N, C, H, W] (what IDX and
// CIFAR files hold), converted to float only for the samples gathered, so a
// set costs one byte per pixel.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace tula::data {

class InMemoryDataset : public Dataset {
 public:
  // images: uint8 [N, C, H, W]; labels: int64 [N], each in [0, num_classes).
  InMemoryDataset(std::string name, torch::Tensor images, torch::Tensor labels,
                  int64_t num_classes);

  std::string name() const override { return name_; }
  int64_t size() const override;
  SampleShape shape() const override;
  int64_t num_classes() const override { return num_classes_; }
  Batch gather(const std::vector<int64_t>& indices) const override;
  // The held bytes themselves (nothing to draw: `seed` is unused).
  Batch gather_bytes(const std::vector<int64_t>& indices, uint64_t seed) const override;
  std::vector<double> channel_mean() const override;
  std::vector<double> channel_std() const override;

 private:
  void compute_stats() const;
  torch::Tensor index_of(const std::vector<int64_t>& indices) const;  // checked

  std::string name_;
  torch::Tensor images_;
  torch::Tensor labels_;
  int64_t num_classes_;
  // Statistics are computed on first use: a pass over the whole set that
  // a run needing no normalization should not pay for.
  mutable std::once_flag stats_once_;
  mutable std::vector<double> mean_;
  mutable std::vector<double> std_;
};

}  // namespace tula::data
