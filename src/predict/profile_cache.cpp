#include "predict/profile_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "predict/error.hpp"
#include "predict/hardware_match.hpp"
#include "predict/json_fields.hpp"

namespace tula::predict {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kKeyField = "cache_key";

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::string ProfileKey::shape_text() const {
  if (input_shape.size() != 3) return "unknown";
  const int64_t h = image_size > 0 ? image_size : input_shape[1];
  const int64_t w = image_size > 0 ? image_size : input_shape[2];
  return std::to_string(input_shape[0]) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

json to_json(const ProfileKey& k) {
  // nlohmann::json orders object keys, so the dump is canonical.
  json j = {{"model", k.model},
          {"input_shape", k.input_shape},
          {"image_size", k.image_size},
          {"classes", k.classes},
          {"train_samples", k.train_samples},
          {"test_samples", k.test_samples},
          {"input", k.input},
          {"bucket_bytes", k.buckets.bucket_bytes},
          {"first_bucket_bytes", k.buckets.first_bucket_bytes},
          {"effort", k.effort},
          {"hardware", hardware_fingerprint(k.hardware)}};
  // Only where there is one: the keys (and cache files) of zoo models stay as they were.
  if (!k.model_digest.empty()) j["model_digest"] = k.model_digest;
  if (k.precision != "fp32") j["precision"] = k.precision;  // likewise for fp32 profiles
  return j;
}

std::string key_hash(const ProfileKey& key) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(to_json(key).dump())));
  return std::string(buf, 12);
}

std::string file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "' to fingerprint it");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(bytes)));
  return buf;
}

std::string cache_file_name(const ProfileKey& key) {
  std::string model = key.model.empty() ? "model" : key.model.substr(key.model.find_last_of('/') + 1);
  if (model.empty()) model = "model";
  for (char& c : model) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) c = '_';
  }
  if (model.front() == '.') model.front() = '_';  // never a hidden file, never ".."
  return model + "-" + key.shape_text() + "-" + key_hash(key) + ".json";
}

EnvGetter process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string profile_cache_dir(const EnvGetter& env) {
  const auto set = [&](const char* name) {
    auto v = env(name);
    return v && !v->empty() ? v : std::nullopt;
  };
  if (const auto dir = set("TULA_CACHE_DIR")) return *dir;
  if (const auto xdg = set("XDG_CACHE_HOME")) return (fs::path(*xdg) / "tula" / "profiles").string();
  if (const auto home = set("HOME")) return (fs::path(*home) / ".cache" / "tula" / "profiles").string();
  throw std::runtime_error("no place for the profile cache: set TULA_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
}

ProfileCache::ProfileCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) throw std::invalid_argument("profile cache: empty directory");
}

std::string ProfileCache::path_for(const ProfileKey& key) const {
  return (fs::path(dir_) / cache_file_name(key)).string();
}

CacheLookup ProfileCache::find(const ProfileKey& key, const HardwareInfo& here) const {
  CacheLookup r;
  r.path = path_for(key);
  const auto text = json_fields::read_file(r.path);
  if (!text) {
    r.miss_reason = "no cached profile";
    return r;
  }
  json doc;
  try {
    doc = json::parse(*text);
  } catch (const json::exception& e) {
    r.miss_reason = "the cached file is not JSON (" + std::string(e.what()) + ")";
    return r;
  }
  Profile p;
  try {
    p = profile_from_json(doc);
  } catch (const ProfileError& e) {
    r.miss_reason = "the cached profile does not read: " + std::string(e.what());
    return r;
  }
  // The hardware the profile itself records decides, whatever its key says
  // (a file copied from another machine keeps its own hardware section).
  std::string why;
  if (!same_hardware(p.hardware, here, &why)) {
    r.miss_reason = "the cached profile was measured on other hardware: " + why;
    return r;
  }
  if (!doc.contains(kKeyField) || doc[kKeyField] != to_json(key)) {
    r.miss_reason = "the cached file was written for another model, input or data size";
    return r;
  }
  r.created = p.created;
  r.profile = std::move(p);
  return r;
}

std::string ProfileCache::store(const ProfileKey& key, json profile_document) const {
  const auto path = path_for(key);
  profile_document[kKeyField] = to_json(key);
  common::write_file_atomically(path, profile_document.dump(2) + "\n");
  return path;
}

}  // namespace tula::predict
