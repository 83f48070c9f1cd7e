// The per-channel mean and standard deviation images are normalized with:
// the user's --normalize, else the data set's own. The same numbers go into
// an exported model, so whoever uses it can feed it the same input.
#pragma once
#include <cstdint>
#include <vector>

#include "data/dataset.hpp"

namespace tula::train {

struct Normalization {
  std::vector<double> mean;  // one per channel; empty: none
  std::vector<double> std;
};

// `requested` holds C means then C deviations, or one of each for every
// channel; empty takes the data set's own (none for synthetic data, whose
// values are already centred noise). Throws std::invalid_argument when the
// count fits neither 2 nor 2 x the data's channels.
Normalization choose_normalization(const std::vector<double>& requested, const data::Dataset& train_set,
                                   bool real_data);

}  // namespace tula::train
