#include "profile/hardware.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "predict/hardware_match.hpp"

namespace tula::profile {
namespace {

// A cgroup limit file holds a byte count or "max" (no limit); v1 reports "no
// limit" as a huge number, which the caller's min() absorbs.
int64_t read_limit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return static_cast<int64_t>(std::stoull(text));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

// One reading of the CPU for the profiler and for matching profiles to this
// machine (src/predict/hardware_match.cpp), so the two always agree.
std::string cpu_model_name(const std::string& cpuinfo_path) { return predict::cpu_model_name(cpuinfo_path); }

int64_t usable_cores() { return predict::usable_cores(); }

int64_t usable_memory_bytes() {
  int64_t total = 0;
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") {
      total = kib * 1024;
      break;
    }
  }
  if (total <= 0) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    total = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
  }
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const int64_t limit = read_limit(path);
    if (limit > 0 && (total <= 0 || limit < total)) total = limit;
  }
  return total;
}

predict::HardwareInfo describe_cpu_hardware() {
  predict::HardwareInfo h = predict::this_machine_cpu();
  h.device.memory_bytes = std::max<int64_t>(1, usable_memory_bytes());
  return h;
}

}  // namespace tula::profile
