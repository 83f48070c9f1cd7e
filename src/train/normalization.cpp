#include "train/normalization.hpp"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

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
    throw std::invalid_argument(fmt::format("--normalize gives {0} means and deviations but {1} has {2} channel(s): "
                                            "give one MEAN,STD pair or {2} means then {2} deviations",
                                            given, train_set.name(), channels));
  }
  return {std::vector<double>(requested.begin(), requested.begin() + static_cast<long>(given)),
          std::vector<double>(requested.begin() + static_cast<long>(given), requested.end())};
}

}  // namespace tula::train
