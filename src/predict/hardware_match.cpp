#include "predict/hardware_match.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "common/cores.hpp"
#include "common/math_library.hpp"

namespace tula::predict {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "'Intel Xeon' with 2 cores", plus the device when it is not the CPU itself.
std::string describe(const HardwareInfo& h) {
  std::string out = fmt::format("'{}' with {} core{}", h.cpu_model, h.cores, h.cores == 1 ? "" : "s");
  if (h.device.kind != "cpu" || (!h.device.name.empty() && h.device.name != h.cpu_model)) {
    out += " and a " + (h.device.kind.empty() ? std::string("unknown") : h.device.kind) + " device";
    if (!h.device.name.empty()) out += " '" + h.device.name + "'";
    if (h.device.kind != "cpu" && h.device.count != 1) out += fmt::format(" (x{})", h.device.count);
  }
  return out;
}

// "'path'", or "none" for a profile or process without one.
std::string library_name(const HardwareInfo& h) {
  return h.math_library.empty() ? std::string("none") : "'" + h.math_library + "'";
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

int64_t usable_cores() { return common::usable_cores(); }

HardwareInfo this_machine_cpu() {
  HardwareInfo h;
  h.cpu_model = cpu_model_name();
  h.cores = usable_cores();
  h.device.kind = "cpu";
  h.device.name = h.cpu_model;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) h.hostname = host;
  h.math_library = common::math_library();
  return h;
}

bool same_hardware(const HardwareInfo& profiled, const HardwareInfo& here, std::string* why) {
  // A CPU profile written before device names were recorded names no
  // device: its device is the CPU (device_name). GPUs are compared by name
  // and count: a profile of one GPU does not describe a node of eight (its
  // communication part differs), nor an H100 an H200.
  const bool same_machine = profiled.cpu_model == here.cpu_model && profiled.cores == here.cores &&
                            profiled.device.kind == here.device.kind && device_name(profiled) == device_name(here) &&
                            (profiled.device.kind == "cpu" || profiled.device.count == here.device.count);
  if (!same_machine) {
    if (why) *why = "profiled on " + describe(profiled) + "; this machine is " + describe(here);
    return false;
  }
  if (profiled.math_library != here.math_library) {
    if (why) {
      *why = "profiled with the math library " + library_name(profiled) + "; this process calls " + library_name(here);
    }
    return false;
  }
  return true;
}

std::string hardware_fingerprint(const HardwareInfo& h) {
  // A CPU's line is as it was before devices were counted, so cached CPU
  // profiles keep their names.
  std::string device = h.device.kind + ":" + device_name(h);
  if (h.device.kind != "cpu") device += "x" + std::to_string(h.device.count);
  return "cpu=" + h.cpu_model + ";cores=" + std::to_string(h.cores) + ";device=" + device + ";math=" + h.math_library;
}

}  // namespace tula::predict
