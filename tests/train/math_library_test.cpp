// The BLAS a run calls is recorded with it, and the reference BLAS, with which
// a model's steps can take twice as long as with OpenBLAS, is warned of. Debian
// installs each BLAS as a libblas.so.3 in a folder of its own
// (/usr/lib/<triple>/blas for the reference one, openblas-openmp for
// OpenBLAS), so a run is pointed at one with LD_LIBRARY_PATH, as a user's
// alternatives setting would.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace fs = std::filesystem;

namespace tula {
namespace {

// The folder of /usr/lib/*/NAME/libblas.so.3, if such a BLAS is installed.
std::optional<fs::path> blas_folder(const std::string& name) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib", ec)) {
    const fs::path folder = entry.path() / name;
    if (fs::exists(folder / "libblas.so.3", ec)) return folder;
  }
  return std::nullopt;
}

struct BlasRun {
  testing::CommandResult result;
  std::string math_library;  // as the start record has it
};

// One training step with the BLAS in `folder` first on the library path.
BlasRun train_with(const fs::path& folder, const testing::TempDir& temp, const std::string& label) {
  const std::string metrics = temp.file(label + ".jsonl");
  BlasRun run;
  run.result = testing::run_command("LD_LIBRARY_PATH=" + folder.string() + " " + testing::tula_binary() +
                                    " train --dataset synthetic --synthetic-size 64 --batch-size 8 --max-steps 1"
                                    " --no-eval --threads 1 --progress none --metrics " + metrics);
  std::ifstream in(metrics);
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("type", "") == "start") run.math_library = j.value("math_library", "");
  }
  return run;
}

TEST(MathLibrary, ARunRecordsItsBlasAndWarnsOfTheReferenceOneOnly) {
  const auto reference = blas_folder("blas");
  const auto openblas = blas_folder("openblas-openmp");
  if (!reference || !openblas) {
    GTEST_SKIP() << "needs both Debian's reference BLAS (libblas3) and OpenBLAS (libopenblas0-openmp), "
                    "which scripts/setup installs";
  }
  const testing::TempDir temp("tula-blas");
  const std::string warning = "the CPU kernels call the reference BLAS";

  const auto slow = train_with(*reference, temp, "reference");
  ASSERT_EQ(slow.result.exit_code, 0) << slow.result.output;
  EXPECT_EQ(fs::path(slow.math_library).parent_path(), fs::canonical(*reference)) << slow.math_library;
  EXPECT_NE(slow.result.output.find(warning), std::string::npos) << slow.result.output;
  EXPECT_NE(slow.result.output.find("apt-get install libopenblas0-openmp"), std::string::npos) << slow.result.output;

  const auto fast = train_with(*openblas, temp, "openblas");
  ASSERT_EQ(fast.result.exit_code, 0) << fast.result.output;
  EXPECT_EQ(fs::path(fast.math_library).parent_path(), fs::canonical(*openblas)) << fast.math_library;
  EXPECT_EQ(fast.result.output.find(warning), std::string::npos) << fast.result.output;
}

}  // namespace
}  // namespace tula
