#include "plan/space.hpp"

namespace tula::plan {

std::vector<int64_t> powers_of_two_upto(int64_t max, bool include_max) {
  std::vector<int64_t> out;
  for (int64_t v = 1; v <= max; v *= 2) out.push_back(v);
  if (include_max && max >= 1 && out.back() != max) out.push_back(max);
  return out;
}

}  // namespace tula::plan
