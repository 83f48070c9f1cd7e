// Every optimizer on a user's TorchScript model, through `tula train`: AGS,
// LARS and LAMB see the module's tensors by name (biases and batch-norm
// weights told apart by shape, as for the zoo) and bring its loss down.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::cli {
namespace {

namespace fs = std::filesystem;
using tula::testing::run_command;
using tula::testing::tula_binary;
using TempDir = tula::testing::TempDir;

std::vector<double> step_losses(const fs::path& metrics) {
  std::vector<double> losses;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line);
    if (row["type"] == "iter") losses.push_back(row["loss"].get<double>());
  }
  return losses;
}

double mean(const std::vector<double>& v, size_t from, size_t to) {
  return std::accumulate(v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(to), 0.0) /
         static_cast<double>(to - from);
}

TEST(ScriptModelTrain, EveryOptimizerBringsItsLossDown) {
  TempDir tmp;
  const auto made = run_command("/usr/bin/python3 " + std::string(TULA_SOURCE_DIR) +
                                    "/tests/models/make_script_models.py " + tmp.str(),
                                180);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // LARS scales each tensor's step by its trust ratio (eta 0.001 x |w| / |g|):
  // it takes a base rate two orders of magnitude above SGD's.
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"sgd", "0.05"}, {"ags", "0.05"}, {"lars", "2"}, {"lamb", "0.05"}};
  for (const auto& [optimizer, lr] : runs) {
    const fs::path metrics = tmp.path() / (optimizer + ".jsonl");
    const auto r = run_command(tula_binary() + " train --model " + (tmp.path() / "net.pt").string() +
                                   " --dataset fashion-mnist --optimizer " + optimizer + " --lr " + lr +
                                   " --batch-size 64 --max-steps 40 --threads 1 --progress none --seed 1"
                                   " --tensor-stats-every 0 --metrics " + metrics.string(),
                               300);
    ASSERT_EQ(r.exit_code, 0) << optimizer << "\n" << r.output;
    const auto losses = step_losses(metrics);
    ASSERT_EQ(losses.size(), 40u) << optimizer;
    EXPECT_LT(mean(losses, 30, 40), mean(losses, 0, 10) - 0.1) << optimizer << ": the last ten steps' mean loss "
                                                                 << "should be well below the first ten's";
  }
}

}  // namespace
}  // namespace tula::cli
