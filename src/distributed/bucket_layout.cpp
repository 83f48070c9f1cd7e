#include "distributed/bucket_layout.hpp"

namespace tula::distributed {

std::vector<std::vector<int64_t>> bucket_layout(const std::vector<ParameterSlot>& params,
                                                const ReducerOptions& options) {
  std::vector<std::vector<int64_t>> groups;
  int64_t bytes = 0;
  for (int64_t i = static_cast<int64_t>(params.size()) - 1; i >= 0; --i) {
    const ParameterSlot& p = params[static_cast<size_t>(i)];
    const bool compatible = !groups.empty() && params[static_cast<size_t>(groups.back().front())].kind == p.kind;
    const int64_t cap = groups.size() <= 1 ? options.first_bucket_bytes : options.bucket_bytes;
    if (groups.empty() || !compatible || bytes >= cap) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(i);
    bytes += p.bytes;
  }
  return groups;
}

std::vector<int64_t> bucket_bytes(const std::vector<ParameterSlot>& params, const ReducerOptions& options) {
  std::vector<int64_t> out;
  for (const auto& group : bucket_layout(params, options)) {
    int64_t bytes = 0;
    for (int64_t i : group) bytes += params[static_cast<size_t>(i)].bytes;
    out.push_back(bytes);
  }
  return out;
}

}  // namespace tula::distributed
