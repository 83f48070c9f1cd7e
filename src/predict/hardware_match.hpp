#pragma once
#include <string>

#include "predict/profile.hpp"

namespace tula::predict {
HardwareInfo this_machine_cpu();
bool same_hardware(const HardwareInfo& profiled, const HardwareInfo& here, std::string* why);
}  // namespace tula::predict
