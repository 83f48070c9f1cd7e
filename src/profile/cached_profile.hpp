// A quick profile from the profile cache (predict/profile_cache.hpp), or one
// measured now and cached: `tula train --batch-size auto` and `tula profile
// --quick --cache` (which `tula tune` runs) take it from here, so a model on
// one input, data size and machine is measured once for both.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "predict/profile.hpp"
#include "predict/profile_cache.hpp"
#include "profile/profiler.hpp"

namespace tula::profile {

// What a quick profile with these options (their input as resolve_input
// resolves it) would measure, on `here`.
predict::ProfileKey quick_profile_key(const ProfileOptions& options, const ResolvedInput& input,
                                      const predict::HardwareInfo& here);

struct CachedProfile {
  predict::Profile profile;  // fitted
  std::string path;          // the cache file it is (or was stored as)
  bool from_cache = false;   // false: measured now
};

// `options.quick` must be set. With `reprofile` it is measured even when
// cached. `log` gets what happened (reused, or measured and why), one line at
// a time, and the profiler's progress; `warn` its warnings. Throws
// std::runtime_error when two measurements in a row do not support a fit.
CachedProfile cached_quick_profile(const ProfileOptions& options, bool reprofile, const Log& log, const Log& warn);

}  // namespace tula::profile
