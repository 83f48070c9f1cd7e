// How fast a catalog's machine type computes against the device a profile was
// measured on: the factor the predictor divides the profiled times by
// (MachineSpec::relative_speed), or why the type cannot be planned from that
// profile. A catalog states each type's speed against a device it names
// (SpeedReference); the profile names the device it was measured on. The
// rules, in order (docs/devices.md):
//   1. the type's accelerator is the profiled device: 1, whatever the catalog says;
//   2. the speed is against a named device: that device is the profiled one
//      (the factor is the speed), or the catalog gives the profiled device's
//      own speed against it (the factor is the ratio); otherwise not planned;
//   3. no device named (older catalogs): a CPU type from a CPU profile takes
//      the speed as before; a type of another kind than the profile's is not
//      planned (a CPU profile does not tell a GPU's speed); a GPU type that
//      names no accelerator is taken to be the profiled GPU, and one that names
//      another is not planned.
// No LibTorch here.
#pragma once
#include <string>

#include "plan/catalog.hpp"
#include "predict/profile.hpp"

namespace tula::plan {

struct SpeedResolution {
  bool plannable = false;
  double factor = 1;   // on the profiled speed
  std::string note;    // how the factor was reached (a prediction's note); "" when there is nothing to say
  std::string reason;  // why not plannable, naming the type, the devices and what would make it plannable
};

// Whether a profile's device matches a speed reference.
bool reference_matches(const SpeedReference& reference, const predict::HardwareInfo& profiled);

// `type` (of `catalog`) planned from `profile`.
SpeedResolution resolve_speed(const MachineType& type, const Catalog& catalog, const predict::Profile& profile);

// `type` with its speed resolved for `profile` (relative_speed the factor,
// speed_note set, speed_resolved true); `type` as it is when it was resolved already.
MachineType resolved_for(const MachineType& type, const SpeedResolution& resolution);

// The catalog as one profile plans it: each type it can plan resolved, the
// others as they were (the planner leaves them out, saying why), so that
// indices into it stay those of `catalog`.
Catalog resolve_speeds(const Catalog& catalog, const predict::Profile& profile);

}  // namespace tula::plan
