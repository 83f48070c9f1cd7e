// What the end-to-end tests of `tula tune` share: the test job (small_cnn
// on a small synthetic data set, so that each takes seconds; the command is
// the same for Fashion-MNIST, only the size differs), one quick profile of
// it, and reading the JSON a job writes.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"

namespace tula::testing {

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// One quick profile of the test job on this machine, measured by the first
// test that needs it and reused by the others (written atomically, so tests
// running at once at worst both measure it).
inline std::string shared_profile() {
  namespace fs = std::filesystem;
  const fs::path path = fs::path(TULA_BINARY).parent_path() / "tune-test-profile.json";
  if (fs::exists(path)) return path.string();
  const fs::path tmp = path.string() + "." + std::to_string(::getpid());
  const auto r = run_command(tula_binary() + " profile --quick --model small_cnn --dataset synthetic --train-samples 512 --out " +
                                 tmp.string(),
                             300);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  fs::rename(tmp, path);
  return path.string();
}

// The test job: small_cnn on 512 synthetic samples, a short pilot; a profile
// it measures is cached beside `out` (in the test's folder), not in the user's ~/.cache.
inline std::string job(const std::string& out, const std::string& extra = "") {
  return "TULA_CACHE_DIR=" + out + ".profile-cache " + tula_binary() + " tune --model small_cnn --dataset synthetic --synthetic-size 512 --pilot-steps 6 "
                         "--watch-every 4 --progress lines --out " +
         out + " " + extra;
}

}  // namespace tula::testing
