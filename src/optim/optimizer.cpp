#include "optim/optimizer.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <torch/torch.h>

namespace tula::optim {

void save_state(torch::serialize::OutputArchive& archive, const std::string& prefix,
                const std::vector<torch::Tensor>& state) {
  for (size_t i = 0; i < state.size(); ++i) {
    if (state[i].defined()) archive.write(prefix + "_" + std::to_string(i), state[i], true);
  }
}

void load_state(torch::serialize::InputArchive& archive, const std::string& prefix,
                const std::vector<ParamRef>& params, std::vector<torch::Tensor>& state) {
  state.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor t;
    if (!archive.try_read(prefix + "_" + std::to_string(i), t, true)) continue;
    if (!t.sizes().equals(params[i].param.sizes())) {
      throw std::runtime_error(fmt::format("optimizer: checkpoint {} {} does not match the shape of parameter {}",
                                           prefix, i, params[i].name));
    }
    state[i] = t.to(params[i].param.device());
  }
}

}  // namespace tula::optim
