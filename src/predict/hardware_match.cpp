#include "predict/hardware_match.hpp"

#include <fstream>
#include <thread>

namespace tula::predict {
HardwareInfo this_machine_cpu() {
  HardwareInfo h;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      h.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  }
  h.cores = std::thread::hardware_concurrency();
  h.device.kind = "cpu";
  return h;
}
bool same_hardware(const HardwareInfo& profiled, const HardwareInfo& here, std::string* why) {
  if (profiled.cpu_model == here.cpu_model && profiled.cores == here.cores) return true;
  if (why) *why = "profiled on '" + profiled.cpu_model + "' with " + std::to_string(profiled.cores) + " cores; this machine is '" + here.cpu_model + "' with " + std::to_string(here.cores) + " cores";
  return false;
}
}  // namespace tula::predict
