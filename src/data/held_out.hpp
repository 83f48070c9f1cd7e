// A validation split carved from a training set: a fixed number of samples,
// chosen by a seeded permutation, held out of training and evaluated instead
// of the test split, so hyperparameters can be tuned without the test set.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "data/dataset.hpp"

namespace tula::data {

// The samples of `base` at `indices`, in that order. Normalization statistics
// are the base set's (for a validation split: the whole training set's).
class SubsetDataset : public Dataset {
 public:
  SubsetDataset(std::shared_ptr<Dataset> base, std::vector<int64_t> indices, std::string name);

  std::string name() const override { return name_; }
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  SampleShape shape() const override { return base_->shape(); }
  int64_t num_classes() const override { return base_->num_classes(); }
  Batch gather(const std::vector<int64_t>& indices) const override;
  Batch gather_seeded(const std::vector<int64_t>& indices, uint64_t seed) const override;
  Batch gather_bytes(const std::vector<int64_t>& indices, uint64_t seed) const override;
  std::vector<double> channel_mean() const override { return base_->channel_mean(); }
  std::vector<double> channel_std() const override { return base_->channel_std(); }
  int64_t bad_images() const override { return base_->bad_images(); }

 private:
  std::vector<int64_t> map(const std::vector<int64_t>& indices) const;

  std::shared_ptr<Dataset> base_;
  std::vector<int64_t> indices_;
  std::string name_;
};

struct HeldOut {
  std::shared_ptr<Dataset> train;       // what is left to train on
  std::shared_ptr<Dataset> validation;  // `size` samples, never trained on
};

// Holds out `size` samples of `train` (0 < size < train->size()), chosen by
// `seed` alone, so every run with the same seed and size evaluates on the same
// samples whatever its own training seed. Throws std::invalid_argument naming
// the sizes otherwise.
HeldOut hold_out(const std::shared_ptr<Dataset>& train, int64_t size, uint64_t seed);

}  // namespace tula::data
