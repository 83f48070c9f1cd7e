// Builds the optimizer `--optimizer` names, from one OptimizerOptions.
#pragma once
#include <memory>
#include <vector>

#include "optim/optimizer.hpp"
#include "optim/optimizer_options.hpp"

namespace tula::optim {

// `reference_batch`: the global batch at which options.lr was tuned (AGS
// scales from it). Throws std::invalid_argument for bad options.
std::unique_ptr<Optimizer> make_optimizer(std::vector<ParamRef> params, const OptimizerOptions& options,
                                          int64_t reference_batch);

}  // namespace tula::optim
