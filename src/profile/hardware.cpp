#include "profile/hardware.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

namespace tula::profile {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

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

std::string cpu_model_name(const std::string& cpuinfo_path) {
  std::ifstream in(cpuinfo_path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(line.substr(0, colon)) == "model name") return trim(line.substr(colon + 1));
  }
  return "unknown";
}

int64_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

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
  predict::HardwareInfo h;
  h.cpu_model = cpu_model_name();
  h.cores = usable_cores();
  h.device.kind = "cpu";
  h.device.name = h.cpu_model;
  h.device.memory_bytes = std::max<int64_t>(1, usable_memory_bytes());
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) h.hostname = host;
  return h;
}

}  // namespace tula::profile
