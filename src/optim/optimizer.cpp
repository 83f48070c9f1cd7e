#include "optim/optimizer.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <torch/torch.h>

namespace tula::optim {

bool use_foreach(const std::string& update, const std::vector<ParamRef>& params) {
  if (update == "foreach") return true;
  if (update == "per-tensor" || params.empty()) return false;
  return !params.front().param.device().is_cpu();
}

GradLists with_gradients(const std::vector<ParamRef>& params) {
  GradLists lists;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& g = params[i].param.grad();
    if (!g.defined()) continue;
    lists.index.push_back(i);
    lists.params.push_back(params[i].param);
    lists.grads.push_back(g);
  }
  return lists;
}

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
