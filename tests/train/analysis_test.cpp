// `tula analyze`: power iteration finds a known spectrum's top eigenvalue, the
// Hessian-vector products agree with an explicit Hessian, and the command
// reads a run's kept checkpoints and metrics and fails clearly on bad ones.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "train/power_iteration.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;

TEST(PowerIteration, FindsTheLargestEigenvalueOfAKnownMatrix) {
  // Q diag(5, -2, 1, 0.5) Q^T with a random orthogonal Q.
  torch::manual_seed(1);
  auto q = std::get<0>(torch::linalg_qr(torch::randn({4, 4}, torch::kDouble)));
  auto a = q.matmul(torch::diag(torch::tensor({5.0, -2.0, 1.0, 0.5}, torch::kDouble))).matmul(q.t());
  auto apply = [&](const TensorList& v) { return TensorList{a.matmul(v[0])}; };
  auto r = power_iteration(apply, {torch::randn({4}, torch::kDouble)}, 200, 1e-10);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.eigenvalue, 5.0, 1e-6);
}

TEST(PowerIteration, HessianVectorProductsMatchTheExplicitHessian) {
  // A tiny softmax regression: its 2x3 weight has a 6x6 Hessian we can build.
  torch::manual_seed(2);
  auto x = torch::randn({16, 3}, torch::kDouble);
  auto y = torch::randint(0, 2, {16});
  auto w = torch::randn({2, 3}, torch::TensorOptions(torch::kDouble).requires_grad(true));
  auto loss_of = [&](const torch::Tensor& weight) {
    return torch::nn::functional::cross_entropy(x.matmul(weight.t()), y);
  };
  auto loss = loss_of(w);
  auto grads = torch::autograd::grad({loss}, {w}, {}, true, true);
  auto hvp = [&](const TensorList& v) {
    auto gv = (grads[0] * v[0]).sum();
    auto hv = torch::autograd::grad({gv}, {w}, {}, true, false);
    return TensorList{hv[0].detach()};
  };
  // The explicit Hessian, row by row: d/dw of each gradient entry.
  auto flat_grad = grads[0].reshape({-1});
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < flat_grad.numel(); ++i) {
    rows.push_back(torch::autograd::grad({flat_grad[i]}, {w}, {}, true, false)[0].reshape({-1}));
  }
  auto hessian = torch::stack(rows);
  const double top = std::get<0>(torch::linalg_eigh(hessian)).abs().max().template item<double>();
  auto r = power_iteration(hvp, {torch::randn({2, 3}, torch::kDouble)}, 500, 1e-12);
  EXPECT_NEAR(r.eigenvalue, top, 1e-6 * std::max(1.0, top));
}

TEST(Analyze, ReadsKeptCheckpointsAndMetrics) {
  const testing::TempDir temp("tula-analyze");
  const fs::path dir = temp.path();
  const std::string tula = testing::tula_binary();
  auto train = testing::run_command(
      tula + " train --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 256 --batch-size 32"
             " --max-steps 4 --checkpoint-every 2 --keep-checkpoints --no-eval --progress none --threads 1"
             " --checkpoint-dir " + (dir / "run").string() + " --metrics " + (dir / "m.jsonl").string());
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_TRUE(fs::exists(dir / "run" / "step-2.pt"));
  EXPECT_TRUE(fs::exists(dir / "run" / "step-4.pt"));
  auto r = testing::run_command(tula + " analyze " + (dir / "run").string() + " --metrics " + (dir / "m.jsonl").string() +
                                " --samples 64 --iterations 20 --threads 1 --out " + (dir / "a.json").string() +
                                " --svg " + (dir / "a.svg").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(dir / "a.json");
  auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["hessian"].size(), 2u);
  EXPECT_EQ(j["hessian"][0]["step"], 2);
  EXPECT_EQ(j["hessian"][1]["step"], 4);
  for (const auto& h : j["hessian"]) {
    EXPECT_TRUE(std::isfinite(h["eigenvalue"].get<double>()));
    EXPECT_GT(h["eigenvalue"].get<double>(), 0.0);  // near a fresh start the loss is locally convex-ish
    EXPECT_GT(h["gradient_norm"].get<double>(), 0.0);
  }
  EXPECT_EQ(j["gradient_norms"].size(), 4u);
  std::ifstream svg(dir / "a.svg");
  std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("largest Hessian eigenvalue"), std::string::npos);
}

TEST(Analyze, MissingOrCorruptCheckpointIsNamed) {
  const testing::TempDir dir("tula-analyze-bad");
  const fs::path bad = dir.path() / "bad.pt";
  {
    std::ofstream out(bad);
    out << "not a checkpoint";
  }
  for (const std::string& path : {bad.string(), std::string("/nonexistent/step-1.pt")}) {
    auto r = testing::run_command(testing::tula_binary() + " analyze " + path, 60);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(path), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace tula::train
