#include "predict/profile_cache.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "helpers/temp_dir.hpp"
#include "predict/hardware_match.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

namespace fs = std::filesystem;

HardwareInfo machine(int64_t cores = 4) {
  HardwareInfo h;
  h.cpu_model = "Synthetic CPU";
  h.cores = cores;
  h.device = {"cpu", "Synthetic CPU", int64_t{8} << 30};
  return h;
}

ProfileKey key() {
  ProfileKey k;
  k.model = "small_cnn";
  k.input_shape = {1, 28, 28};
  k.classes = 10;
  k.train_samples = 60000;
  k.test_samples = 10000;
  k.hardware = machine();
  return k;
}

// A profile as the cache would hold it: measured on `hw`.
nlohmann::json document(const HardwareInfo& hw) {
  auto p = test::make_profile({}, 1);
  p.hardware = hw;
  auto j = to_json(p);
  j["measurement"] = {{"tool", "test"}};
  return j;
}

EnvGetter env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ProfileCache, FileNamesAreReadableAndTheHashCoversTheWholeKey) {
  const auto k = key();
  const std::string name = cache_file_name(k);
  EXPECT_TRUE(std::regex_match(name, std::regex(R"(small_cnn-1x28x28-[0-9a-f]{12}\.json)"))) << name;
  EXPECT_EQ(cache_file_name(k), name) << "the same key, the same name";

  auto resized = k;
  resized.image_size = 64;
  EXPECT_TRUE(std::regex_match(cache_file_name(resized), std::regex(R"(small_cnn-1x64x64-[0-9a-f]{12}\.json)")))
      << cache_file_name(resized);

  std::vector<ProfileKey> others(10, k);
  others[0].model = "resnet20";
  others[1].input_shape = {3, 28, 28};
  others[2].image_size = 32;
  others[3].classes = 100;
  others[4].train_samples = 50000;
  others[5].test_samples = 5000;
  others[6].hardware.cores = 2;
  others[7].buckets.bucket_bytes = 1 << 20;
  others[8].hardware.math_library = "/usr/lib/elsewhere/libblas.so.3";
  others[9].precision = "bf16";  // a profile is for one precision
  for (const auto& other : others) {
    EXPECT_NE(key_hash(other), key_hash(k)) << to_json(other).dump();
  }
  auto elsewhere = k;
  elsewhere.hardware.hostname = "another-node";
  elsewhere.hardware.device.memory_bytes = 1;
  EXPECT_EQ(key_hash(elsewhere), key_hash(k)) << "host name and memory are not part of the fingerprint";

  auto odd = k;
  odd.model = "../we ird/name";
  const auto odd_name = cache_file_name(odd);
  EXPECT_EQ(odd_name.find('/'), std::string::npos) << odd_name;
  EXPECT_EQ(odd_name.find(' '), std::string::npos) << odd_name;
  EXPECT_NE(odd_name.front(), '.') << odd_name;
}

TEST(ProfileCache, LivesWhereTheEnvironmentSays) {
  EXPECT_EQ(profile_cache_dir(env_of({{"TULA_CACHE_DIR", "/c/tula"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})),
            "/c/tula");
  EXPECT_EQ(profile_cache_dir(env_of({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})), "/x/tula/profiles");
  EXPECT_EQ(profile_cache_dir(env_of({{"HOME", "/h"}})), "/h/.cache/tula/profiles");
  EXPECT_EQ(profile_cache_dir(env_of({{"TULA_CACHE_DIR", ""}, {"XDG_CACHE_HOME", ""}, {"HOME", "/h"}})),
            "/h/.cache/tula/profiles")
      << "empty values count as unset";
  EXPECT_THROW(profile_cache_dir(env_of({})), std::runtime_error);
}

TEST(ProfileCache, StoresAtomicallyAndFindsWhatItStored) {
  const tula::testing::TempDir dir;
  const ProfileCache cache(dir.file("profiles"));  // created on the first store
  const auto k = key();
  auto miss = cache.find(k, machine());
  EXPECT_FALSE(miss.profile);
  EXPECT_EQ(miss.miss_reason, "no cached profile");
  EXPECT_EQ(miss.path, cache.path_for(k));

  const auto path = cache.store(k, document(machine()));
  EXPECT_EQ(path, cache.path_for(k));
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(dir.file("profiles")));
  const auto hit = cache.find(k, machine());
  ASSERT_TRUE(hit.profile) << hit.miss_reason;
  EXPECT_EQ(hit.profile->model.name, "resnet20");
  EXPECT_EQ(hit.path, path);
  // The stored file is a profile with its measurement section and its key.
  const auto stored = nlohmann::json::parse(tula::testing::read_text(path));
  EXPECT_EQ(stored["cache_key"], to_json(k));
  EXPECT_EQ(stored["measurement"]["tool"], "test");

  // A second store replaces the file whole; no temporary file is left behind.
  auto newer = document(machine());
  newer["measurement"]["tool"] = "again";
  cache.store(k, newer);
  EXPECT_EQ(nlohmann::json::parse(tula::testing::read_text(path))["measurement"]["tool"], "again");
  for (const auto& entry : fs::directory_iterator(dir.file("profiles"))) {
    EXPECT_EQ(entry.path(), fs::path(path)) << "only the profile is there, no temporary file";
  }

  // A cache that cannot be written says so.
  std::ofstream(dir.file("a-file")) << "not a directory";
  const ProfileCache blocked(dir.file("a-file"));
  EXPECT_THROW(blocked.store(k, document(machine())), std::runtime_error);
}

TEST(ProfileCache, AProfileFromOtherHardwareIsNeverUsed) {
  const tula::testing::TempDir dir;
  const ProfileCache cache(dir.str());
  const auto k = key();
  // Measured on an 8-core machine, stored where this machine's key points
  // (a cache directory copied between machines, say).
  cache.store(k, document(machine(8)));
  const auto r = cache.find(k, machine(4));
  EXPECT_FALSE(r.profile);
  EXPECT_NE(r.miss_reason.find("other hardware"), std::string::npos) << r.miss_reason;
  EXPECT_NE(r.miss_reason.find("with 8 cores; this machine is 'Synthetic CPU' with 4 cores"), std::string::npos)
      << r.miss_reason;
  // On the 8-core machine, under its own key, the same profile is used.
  auto eight = k;
  eight.hardware = machine(8);
  cache.store(eight, document(machine(8)));
  EXPECT_TRUE(cache.find(eight, machine(8)).profile);
  EXPECT_FALSE(cache.find(eight, machine(4)).profile);
}

TEST(ProfileCache, AnotherKeysFileOrABrokenFileIsAMissNotAnError) {
  const tula::testing::TempDir dir;
  const ProfileCache cache(dir.str());
  const auto k = key();
  auto other = k;
  other.train_samples = 123;
  cache.store(other, document(machine()));
  fs::copy_file(cache.path_for(other), cache.path_for(k));
  auto r = cache.find(k, machine());
  EXPECT_FALSE(r.profile);
  EXPECT_NE(r.miss_reason.find("another model, input or data size"), std::string::npos) << r.miss_reason;

  std::ofstream(cache.path_for(k), std::ios::trunc) << "{ half a file";
  r = cache.find(k, machine());
  EXPECT_FALSE(r.profile);
  EXPECT_NE(r.miss_reason.find("not JSON"), std::string::npos) << r.miss_reason;

  std::ofstream(cache.path_for(k), std::ios::trunc) << R"({"format": "tula-profile", "version": 1})";
  r = cache.find(k, machine());
  EXPECT_FALSE(r.profile);
  EXPECT_NE(r.miss_reason.find("does not read"), std::string::npos) << r.miss_reason;
}

}  // namespace
}  // namespace tula::predict
