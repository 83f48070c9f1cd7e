#include "plan/device_speed.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::plan {
namespace {

using common::format_number;

// Device names as devices report them, compared without case and outer spaces.
std::string normalized(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  std::string out = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool same_device(const std::string& a, const std::string& b) {
  return !a.empty() && normalized(a) == normalized(b);
}

// "'NVIDIA H100 80GB HBM3'" or "the cpu 'Intel Xeon' (2 cores)".
std::string profiled_device(const predict::HardwareInfo& h) {
  if (h.device.kind == "cpu") return fmt::format("the cpu '{}' ({} cores)", predict::device_name(h), h.cores);
  return fmt::format("the {} device '{}'", h.device.kind, predict::device_name(h));
}

// The catalog's speed of the profiled device against `reference`, from a
// type carrying that device and stating its speed against the same reference.
const MachineType* type_of_profiled_device(const Catalog& catalog, const SpeedReference& reference,
                                           const predict::HardwareInfo& profiled) {
  for (const auto& m : catalog.machines) {
    if (m.speed_given && m.speed_relative_to == reference &&
        same_device(m.spec.accelerator_model, predict::device_name(profiled))) {
      return &m;
    }
  }
  return nullptr;
}

SpeedResolution plannable(double factor, std::string note) { return {true, factor, std::move(note), ""}; }
SpeedResolution not_plannable(std::string reason) { return {false, 1, "", std::move(reason)}; }

// Rule 2: the speed is against a named device.
SpeedResolution against_named_device(const MachineType& type, const Catalog& catalog, const predict::Profile& profile) {
  const auto& s = type.spec;
  const auto& h = profile.hardware;
  const auto& ref = type.speed_relative_to;
  if (reference_matches(ref, h)) {
    const bool assumed = s.device_kind != h.device.kind;
    return plannable(s.relative_speed,
                     fmt::format("compute: profiled times divided by {}'s relative speed {} against {}, the profiled "
                                 "device{}",
                                 s.name, format_number(s.relative_speed), ref.describe(),
                                 assumed ? fmt::format(" (the catalog's assumption: no {} device was profiled)",
                                                       s.device_kind)
                                         : ""));
  }
  if (const auto* own = type_of_profiled_device(catalog, ref, h)) {
    const double factor = s.relative_speed / own->spec.relative_speed;
    return plannable(factor, fmt::format("compute: profiled times divided by {}, {}'s speed {} over the profiled "
                                         "'{}''s {} (both against {})",
                                         format_number(factor), s.name, format_number(s.relative_speed),
                                         predict::device_name(h), format_number(own->spec.relative_speed),
                                         ref.describe()));
  }
  return not_plannable(fmt::format(
      "{}: its relative_speed {} is against {}, and the profile was measured on {}, whose speed against it the "
      "catalog does not give; profile on {} or on {}'s own device, or add the profiled device's speed against the "
      "same reference",
      s.name, format_number(s.relative_speed), ref.describe(), profiled_device(h), ref.describe(), s.name));
}

// Rule 3: no device named.
SpeedResolution against_the_profiled_device(const MachineType& type, const predict::Profile& profile) {
  const auto& s = type.spec;
  const auto& h = profile.hardware;
  if (s.device_kind != h.device.kind) {
    if (!type.speed_given) {
      return not_plannable(
          fmt::format("{}: no profile of a '{}' device and no relative_speed in the catalog", s.name, s.device_kind));
    }
    return not_plannable(fmt::format(
        "{}: no profile of a '{}' device, and its relative_speed {} names no device it is against; a profile of "
        "{} does not tell a {} device's speed: profile on {}'s device (tula profile --device {}), or name the device "
        "the speed is against (speed_relative_to)",
        s.name, s.device_kind, format_number(s.relative_speed), profiled_device(h), s.device_kind, s.name,
        s.device_kind));
  }
  if (h.device.kind == "cpu") {
    // As before devices were named: the speed is against the profiled CPU.
    return plannable(s.relative_speed,
                     s.relative_speed == 1 ? ""
                                           : fmt::format("compute: profiled times divided by {}'s relative speed {}",
                                                         s.name, format_number(s.relative_speed)));
  }
  if (type.speed_given && s.relative_speed != 1) {
    return not_plannable(fmt::format("{}: its relative_speed {} names no device it is against, and with a profile of "
                                     "{} that cannot be told; name it (speed_relative_to)",
                                     s.name, format_number(s.relative_speed), profiled_device(h)));
  }
  if (s.accelerator_model.empty()) {
    return plannable(1, fmt::format("compute: {} names no accelerator model; taken to be the profiled '{}'", s.name,
                                    predict::device_name(h)));
  }
  return not_plannable(fmt::format("{}: its accelerator '{}' is not the profiled '{}', and the catalog gives no speed "
                                   "of one against the other (relative_speed with speed_relative_to)",
                                   s.name, s.accelerator_model, predict::device_name(h)));
}

}  // namespace

bool reference_matches(const SpeedReference& r, const predict::HardwareInfo& h) {
  if (!r.named()) return false;
  if (!r.device.empty() && !same_device(r.device, predict::device_name(h))) return false;
  if (!r.kind.empty() && r.kind != h.device.kind) return false;
  if (r.cores > 0 && (h.device.kind != "cpu" || r.cores != h.cores)) return false;
  return true;
}

SpeedResolution resolve_speed(const MachineType& type, const Catalog& catalog, const predict::Profile& profile) {
  if (type.speed_resolved) return plannable(type.spec.relative_speed, type.spec.speed_note);
  const auto& h = profile.hardware;
  if (same_device(type.spec.accelerator_model, predict::device_name(h))) {
    return plannable(1, type.speed_given && type.spec.relative_speed != 1
                            ? fmt::format("compute: {} carries the profiled '{}'; its catalog speed {} is not applied",
                                          type.spec.name, predict::device_name(h),
                                          format_number(type.spec.relative_speed))
                            : "");
  }
  if (type.speed_given && type.speed_relative_to.named()) return against_named_device(type, catalog, profile);
  return against_the_profiled_device(type, profile);
}

MachineType resolved_for(const MachineType& type, const SpeedResolution& r) {
  if (type.speed_resolved) return type;
  MachineType out = type;
  out.spec.relative_speed = r.factor;
  out.spec.speed_note = r.note;
  out.speed_resolved = true;
  return out;
}

Catalog resolve_speeds(const Catalog& catalog, const predict::Profile& profile) {
  Catalog out = catalog;
  for (auto& m : out.machines) {
    const auto r = resolve_speed(m, catalog, profile);
    if (r.plannable) m = resolved_for(m, r);
  }
  return out;
}

}  // namespace tula::plan
