// The fitted parameters of a profile in a few lines for people, each with its
// standard error: what `tula profile` prints when it is done. No LibTorch.
#pragma once
#include <string>

#include "predict/fit.hpp"

namespace tula::profile {

std::string describe_fit(const predict::FittedModels& m);

}  // namespace tula::profile
