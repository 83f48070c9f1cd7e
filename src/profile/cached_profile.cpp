#include "profile/cached_profile.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "common/engine_names.hpp"
#include "predict/hardware_match.hpp"
#include "profile/device.hpp"

namespace tula::profile {

predict::ProfileKey quick_profile_key(const ProfileOptions& o, const ResolvedInput& in,
                                      const predict::HardwareInfo& here) {
  predict::ProfileKey k;
  k.model = o.model;
  if (common::is_script_model_path(o.model)) k.model_digest = predict::file_digest(o.model);
  k.input_shape = in.data_shape;
  const bool resized =
      in.data_shape.size() == 3 && (in.target.height != in.data_shape[1] || in.target.width != in.data_shape[2]);
  k.image_size = resized ? in.target.height : 0;
  k.classes = in.target.classes;
  k.train_samples = in.data.train_samples;
  k.test_samples = in.data.test_samples;
  const auto data = training_data(o);
  k.input = data.dataset + "/threads=" + std::to_string(data.decode_threads) + (data.augment ? "/augment" : "/no-augment");
  k.buckets = {std::llround(o.communication.bucket_mb * (1 << 20)), std::llround(o.communication.first_bucket_mb * (1 << 20))};
  k.effort = "quick";
  k.precision = o.precision;
  k.hardware = here;
  return k;
}

namespace {

std::string data_text(const predict::ProfileKey& k) {
  return fmt::format("{} on {} input, {} training and {} test samples", k.model, k.shape_text(), k.train_samples,
                     k.test_samples);
}

}  // namespace

CachedProfile cached_quick_profile(const ProfileOptions& o, bool reprofile, const Log& log, const Log& warn) {
  if (!o.quick) throw std::invalid_argument("the profile cache holds quick profiles only (--quick)");
  const auto say = [&](const std::string& line) {
    if (log) log(line);
  };
  // This machine as the profile would describe it: its CPU, and the GPU a
  // CUDA profile measures (name and count decide, not memory).
  auto here = predict::this_machine_cpu();
  if (const auto device = profile_device(o.device); device.is_cuda()) {
    here = describe_hardware(device);
    here.device.memory_bytes = 0;
  }
  // Resolved once: a profile measured below takes it rather than opening the data set again.
  const auto input = resolve_input(o);
  const auto key = quick_profile_key(o, input, here);
  const predict::ProfileCache cache(predict::profile_cache_dir());
  CachedProfile out;
  out.path = cache.path_for(key);
  std::string why_measure = "--reprofile";
  if (!reprofile) {
    auto hit = cache.find(key, here);
    if (hit.profile) {
      say("reused the cached profile " + hit.path + " (measured " + hit.created +
          " on this hardware; --reprofile measures it again)");
      out.profile = std::move(*hit.profile);
      out.from_cache = true;
      return out;
    }
    why_measure = hit.miss_reason + " at " + hit.path;
  }
  say("measuring a quick profile of " + data_text(key) + " (" + why_measure +
      "): `tula profile --quick`, run in this process");
  const auto start = common::Clock::now();
  const auto progress = [&](const std::string& line) { say("  profile: " + line); };
  auto run = run_profile(o, progress, warn, &input);
  if (!run.fitted) {
    // Mostly a burst of load from elsewhere during a short trial: one more
    // quick profile usually fits.
    say("the quick profile's measurements do not support a fit (" + run.fit_error + "); measuring it once more");
    run = run_profile(o, progress, warn, &input);
  }
  if (!run.fitted) {
    throw std::runtime_error("the quick profile's measurements do not support a fit (" + run.fit_error + ")");
  }
  out.path = cache.store(key, profile_document(run));
  say("measured the profile in " + common::format_seconds(common::since(start)) + " and cached it at " + out.path);
  out.profile = std::move(run.profile);
  return out;
}

}  // namespace tula::profile
