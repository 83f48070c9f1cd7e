// Profiles kept between runs, so `tula train --batch-size auto` measures a
// model once per input, data size and machine rather than at every start.
// One JSON file per key, named for people (small_cnn-1x28x28-3f9a0c2b71de.json:
// the model, the input it sees, a short hash of the whole key), written
// atomically. A cached profile is used only when its key matches exactly and
// its hardware matches this machine (hardware_match.hpp); anything else is a
// miss that says why. No LibTorch: the tune runner may read it too.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/profile.hpp"

namespace tula::predict {

// What a cached profile was measured for. Two runs with equal keys would
// measure the same thing.
struct ProfileKey {
  std::string model;
  // A model given as a file: a hash of its bytes, so that a file changed in
  // place is measured again (empty for a zoo model).
  std::string model_digest;
  std::vector<int64_t> input_shape;  // C, H, W of the data
  int64_t image_size = 0;            // the side the model sees when resized (0: the data's own H x W)
  int64_t classes = 0;
  int64_t train_samples = 0;
  int64_t test_samples = 0;
  // How batches are read, which the input trials time: the data set, its
  // decode threads and augmentation ("imagefolder/threads=0/augment").
  std::string input;
  BucketSettings buckets;
  std::string effort = "quick";      // how it was measured ("quick": `tula profile --quick`)
  std::string precision = "fp32";    // the steps' precision (`--precision`): a profile is for one
  HardwareInfo hardware;             // CPU model, cores, device kind and name (the fingerprint)

  // C x H x W of what the model sees ("1x28x28").
  std::string shape_text() const;
};

// The key as JSON (the hardware as its fingerprint fields only), canonical:
// equal keys give equal text.
nlohmann::json to_json(const ProfileKey& key);
// 12 hex digits of a 64-bit FNV-1a hash of to_json(key).dump().
std::string key_hash(const ProfileKey& key);
// 16 hex digits of a 64-bit FNV-1a hash of the file's bytes; throws
// std::runtime_error naming a file that cannot be read.
std::string file_digest(const std::string& path);
// "<model>-<CxHxW>-<hash>.json", with the file name alone of a model given
// as a path; characters other than letters, digits, '_', '.' and '-' in the
// model name become '_'.
std::string cache_file_name(const ProfileKey& key);

// Reads an environment variable (injectable for tests).
using EnvGetter = std::function<std::optional<std::string>(const std::string&)>;
EnvGetter process_env();

// Where profiles are cached: $TULA_CACHE_DIR, else $XDG_CACHE_HOME/tula/profiles,
// else $HOME/.cache/tula/profiles (empty values count as unset). Throws
// std::runtime_error when none of the three is set.
std::string profile_cache_dir(const EnvGetter& env = process_env());

struct CacheLookup {
  std::optional<Profile> profile;  // set on a hit
  std::string path;                // the file looked at
  std::string created;             // the hit's `created` time
  std::string miss_reason;         // on a miss: why ("no cached profile", "measured on other hardware: ...")
};

class ProfileCache {
 public:
  explicit ProfileCache(std::string dir);
  const std::string& dir() const { return dir_; }
  std::string path_for(const ProfileKey& key) const;

  // The cached profile for `key`, if there is one measured for the same key on
  // hardware like `here`. A file that cannot be read, another key's file, or
  // one whose hardware differs is a miss saying so, never an error.
  CacheLookup find(const ProfileKey& key, const HardwareInfo& here) const;

  // Writes `profile_document` (a profile's JSON, with its measurement
  // section) with the key added as "cache_key", atomically; returns the path.
  // Throws std::runtime_error when it cannot be written.
  std::string store(const ProfileKey& key, nlohmann::json profile_document) const;

 private:
  std::string dir_;
};

}  // namespace tula::predict
