#include "optim/make_optimizer.hpp"

#include <stdexcept>

#include "optim/ags.hpp"
#include "optim/lamb.hpp"
#include "optim/lars.hpp"
#include "optim/sgd.hpp"

namespace tula::optim {

std::unique_ptr<Optimizer> make_optimizer(std::vector<ParamRef> params, const OptimizerOptions& options,
                                          int64_t reference_batch) {
  options.validate();
  if (options.name == "sgd") return std::make_unique<SGD>(std::move(params), options);
  if (options.name == "lars") return std::make_unique<LARS>(std::move(params), options);
  if (options.name == "lamb") return std::make_unique<LAMB>(std::move(params), options);
  if (options.name == "ags") return std::make_unique<AGS>(std::move(params), options, reference_batch);
  // validate() accepts only optimizer_names(): a name there without a branch here is a bug.
  throw std::logic_error("make_optimizer: no constructor for optimizer '" + options.name + "'");
}

}  // namespace tula::optim
