#include "common/gpu_mapping.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace tula::common {
namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Whether one entry of the list names a device of `physical`.
bool names_a_device(const std::string& entry, int physical) {
  if (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) return entry.size() > 4;
  if (entry.empty()) return false;
  for (const char c : entry) {
    if (c < '0' || c > '9') return false;
  }
  const long index = std::strtol(entry.c_str(), nullptr, 10);
  return index < physical;
}

}  // namespace

int visible_gpu_count(const std::optional<std::string>& visible, int physical) {
  if (physical < 0) physical = 0;
  if (!visible) return physical;
  std::stringstream list(*visible);
  std::string entry;
  int count = 0;
  while (std::getline(list, entry, ',')) {
    if (!names_a_device(trimmed(entry), physical)) break;
    ++count;
  }
  return std::min(count, physical);
}

int visible_gpu_count(int physical) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible_gpu_count(visible ? std::optional<std::string>(visible) : std::nullopt, physical);
}

int gpu_of_local_rank(int local_rank, int gpus) {
  if (gpus < 1) throw std::invalid_argument("no GPU is visible to this process (CUDA_VISIBLE_DEVICES)");
  if (local_rank < 0) throw std::invalid_argument("LOCAL_RANK must not be negative");
  return local_rank % gpus;
}

}  // namespace tula::common
