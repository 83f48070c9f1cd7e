#include "train/normalization.hpp"

#include <stdexcept>
#include <string>

namespace tula::train {

Normalization choose_normalization(const std::vector<double>& requested, const data::Dataset& train_set,
                                   bool real_data) {
  const auto channels = static_cast<size_t>(train_set.shape().channels);
  if (requested.empty()) {
    if (!real_data) return {};
    return {train_set.channel_mean(), train_set.channel_std()};
  }
  const size_t given = requested.size() / 2;
  if (given == 1) return {std::vector<double>(channels, requested[0]), std::vector<double>(channels, requested[1])};
  if (given != channels) {
    throw std::invalid_argument("--normalize gives " + std::to_string(given) + " means and deviations but " +
                                train_set.name() + " has " + std::to_string(channels) +
                                " channel(s): give one MEAN,STD pair or " + std::to_string(channels) +
                                " means then " + std::to_string(channels) + " deviations");
  }
  return {std::vector<double>(requested.begin(), requested.begin() + static_cast<long>(given)),
          std::vector<double>(requested.begin() + static_cast<long>(given), requested.end())};
}

}  // namespace tula::train
