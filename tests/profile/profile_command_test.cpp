// `tula profile --quick` end to end, as a user runs it: small_cnn on
// synthetic Fashion-MNIST-shaped input, then the profile through `tula
// predict`, `tula plan` and `tula simulate`. One test, so the profile is
// measured once (CTest runs each test in its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "predict/fit.hpp"
#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::profile {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::tula_binary;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

void expect_interval(const nlohmann::json& i, const std::string& what) {
  EXPECT_LE(i["lo"].get<double>(), i["estimate"].get<double>()) << what;
  EXPECT_LE(i["estimate"].get<double>(), i["hi"].get<double>()) << what;
  EXPECT_GT(i["estimate"].get<double>(), 0) << what;
}

TEST(ProfileCommand, QuickProfileFitsAndRoundTripsThroughPredictPlanAndSimulate) {
  const testing::TempDir temp("tula-profile-test");
  const fs::path dir = temp.path();
  const auto path = (dir / "small_cnn.json").string();
  const std::string root = TULA_SOURCE_DIR;

  // The quick grid's batches given explicitly: the automatic grid stops after
  // a step slower than 0.5 s, which a loaded machine reaches at batch 64, and
  // this test needs a grid that spans a factor of 64 whatever the load.
  auto r = run_command(tula_binary() + " profile --model small_cnn --input-shape 1x28x28 --classes 10 "
                                       "--train-samples 60000 --test-samples 10000 --workers 2 --quick "
                                       "--batch-sizes 4,16,64,256 --out " + path,
                       300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fitted:"), std::string::npos) << r.output;
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
        << "a temporary file was left behind: " << entry.path();
  }

  // src/predict reads it strictly and fits it.
  const auto p = predict::load_profile(path);
  EXPECT_EQ(p.model.name, "small_cnn");
  EXPECT_EQ(p.model.gradient_bytes, 4 * p.model.parameters);
  EXPECT_EQ(p.model.bucket_bytes.size(), 2u) << "small_cnn's gradient in the reducer's two buckets";
  EXPECT_EQ(p.data.train_samples, 60000);
  EXPECT_EQ(p.data.input_shape, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(p.hardware.device.kind, "cpu");
  EXPECT_GT(p.hardware.cores, 0);
  EXPECT_FALSE(p.fitted.is_null());
  int single = 0, shared = 0;
  for (const auto& c : p.compute) {
    (c.workers_per_node == 1 ? single : shared) += 1;
    EXPECT_EQ(c.forward_backward_s.size(), 3u) << "every repeat is recorded";
  }
  EXPECT_GE(single, 3);
  EXPECT_GE(shared, 1) << "contention samples from the worker processes";
  ASSERT_GE(p.allreduce.size(), 3u);
  EXPECT_EQ(p.allreduce.front().bytes, 4096);
  EXPECT_EQ(p.allreduce.back().bytes, p.model.gradient_bytes);
  for (const auto& a : p.allreduce) EXPECT_EQ(a.workers, 2);
  ASSERT_FALSE(p.overlap.empty());
  EXPECT_EQ(p.overlap[0].workers, 2);
  EXPECT_FALSE(p.overlap[0].step_s.empty()) << "the overlap trial records its steps";
  EXPECT_EQ(p.evaluation.size(), 3u);
  // The loader `tula train` would use (synthetic images, generated as drawn)
  // timed alone and feeding steps.
  ASSERT_EQ(p.loader.size(), 1u);
  EXPECT_EQ(p.loader[0].threads, 1) << "an in-memory set is prepared on the loader's own thread";
  EXPECT_GE(p.loader[0].seconds.size(), 3u);
  ASSERT_EQ(p.input_steps.size(), 1u);
  EXPECT_EQ(p.input_steps[0].batch, p.loader[0].batch);
  EXPECT_EQ(p.input_steps[0].step_s.size(), p.input_steps[0].compute_s.size());
  EXPECT_NE(r.output.find("input at batch"), std::string::npos) << r.output;

  const auto m = predict::fit_profile(p);
  EXPECT_TRUE(m.input.measured);
  // Unless the environment chose, tula ran with OpenMP's spinning cut short (kernels/openmp_wait.hpp).
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    EXPECT_EQ(read_json(path)["measurement"]["openmp_wait"], "GOMP_SPINCOUNT=1000");
  }
  // Step times are recorded, not ordered: on a loaded machine a batch-4 step
  // has been seen to take longer than a batch-256 one, so no timing relation
  // is asserted. What grows with the batch whatever the load is the memory
  // LibTorch's allocator counted: the largest batch needs more than the
  // smallest.
  for (const auto& c : p.compute) {
    for (double s : c.forward_backward_s) EXPECT_GT(s, 0) << "batch " << c.batch_per_worker;
  }
  const predict::ComputeSample* smallest = nullptr;
  const predict::ComputeSample* largest = nullptr;
  for (const auto& c : p.compute) {
    if (c.workers_per_node != 1) continue;
    if (!smallest || c.batch_per_worker < smallest->batch_per_worker) smallest = &c;
    if (!largest || c.batch_per_worker > largest->batch_per_worker) largest = &c;
  }
  ASSERT_GE(largest->batch_per_worker, 64 * smallest->batch_per_worker);
  ASSERT_GE(p.memory.size(), 2u);
  const auto by_batch = [](const predict::MemorySample& a, const predict::MemorySample& b) { return a.batch < b.batch; };
  const auto least = *std::min_element(p.memory.begin(), p.memory.end(), by_batch);
  const auto most = *std::max_element(p.memory.begin(), p.memory.end(), by_batch);
  EXPECT_GT(most.bytes, least.bytes) << "batch " << most.batch << " against " << least.batch;
  EXPECT_GT(m.compute.optimizer.value(0), 0);
  EXPECT_GE(m.allreduce.alpha(), 0);
  EXPECT_GT(m.allreduce.bandwidth(), 1e6) << "loopback moves more than 1 MB/s";
  EXPECT_GE(m.overlap.p, 1);
  EXPECT_GT(m.memory.params.value(1), 28 * 28 * 4) << "activations exceed the input per sample";
  EXPECT_GE(m.memory.params.value(0), 3.0 * p.model.gradient_bytes * 0.9)
      << "static memory holds weights, gradients and momentum";
  EXPECT_LT(m.memory.params.value(0), 3.0 * p.model.gradient_bytes + (64 << 20));

  // The measurement section says how, and holds the static memory it counted.
  const auto j = read_json(path);
  ASSERT_TRUE(j.contains("measurement"));
  EXPECT_EQ(j["measurement"]["static_memory"]["optimizer_state_bytes"].get<int64_t>(), p.model.gradient_bytes);
  EXPECT_TRUE(j["measurement"]["methods"].contains("memory"));
  // The anchor check bracketed the compute grid: a mid batch of the grid,
  // timed before and after (the figures depend on the machine's load).
  const auto& anchor = j["measurement"]["anchor"];
  ASSERT_TRUE(anchor.is_object()) << j["measurement"].dump(2);
  EXPECT_EQ(anchor["batch"].get<int64_t>(), 16) << "a mid batch of the quick grid 4, 16, 64, 256";
  EXPECT_GT(anchor["start_s"].get<double>(), 0);
  EXPECT_GT(anchor["end_s"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(anchor["ratio"].get<double>(), anchor["end_s"].get<double>() / anchor["start_s"].get<double>());
  EXPECT_TRUE(anchor["remeasured"].is_boolean());
  EXPECT_TRUE(anchor["warning"].is_string());
  EXPECT_EQ(anchor["anchors_s"].size(), anchor["remeasured"].get<bool>() ? 3u : 2u);
  EXPECT_GT(anchor["after_profile_s"].get<double>(), 0);
  EXPECT_NE(r.output.find("anchor (1 worker, batch 16"), std::string::npos) << r.output;
  EXPECT_FALSE(j["measurement"].contains("time_budget")) << "no budget was given";

  // predict: every quantity with an interval.
  r = run_command(tula_binary() + " predict --profile " + path + " --workers 2 --batch-size 32 --json", 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto pred = nlohmann::json::parse(r.output);
  for (const auto* key : {"iteration_s", "epoch_s", "memory_bytes", "time_s"}) expect_interval(pred[key], key);
  EXPECT_EQ(pred["global_batch"].get<int64_t>(), 64);
  r = run_command(tula_binary() + " predict --profile " + path + " --workers 2 --batch-size 32", 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("iteration"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("assumptions:"), std::string::npos) << r.output;

  // plan: table, JSON and SVG.
  const auto svg = (dir / "plan.svg").string();
  r = run_command(tula_binary() + " plan --profile " + path + " --catalog " + root +
                      "/catalogs/example.json --objective knee --svg " + svg,
                  60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("knee"), std::string::npos) << r.output;
  std::ifstream figure(svg);
  const std::string svg_text((std::istreambuf_iterator<char>(figure)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg_text.find("<svg"), std::string::npos);
  r = run_command(tula_binary() + " plan --profile " + path + " --catalog " + root +
                      "/catalogs/example.json --objective budget=100 --json",
                  60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto plan = nlohmann::json::parse(r.output);
  EXPECT_FALSE(plan["front"].empty());
  EXPECT_LE(plan["chosen"]["cost"]["estimate"].get<double>(), 100.0);

  // simulate: 64 GPUs it does not have, with its assumptions.
  r = run_command(tula_binary() + " simulate --profile " + path + " --cluster " + root +
                      "/catalogs/cluster-64gpu.json",
                  60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("assumptions:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("relative_speed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("     64 "), std::string::npos) << "a row with 64 workers:\n" << r.output;
}

// A budget far too small for even the fits' minimum: the plan is cut to it,
// the minimum is measured anyway, and the profile says by how much it went over.
TEST(ProfileCommand, ATimeBudgetCutsThePlanButNotTheMinimum) {
  const testing::TempDir dir("tula-profile-budget");
  const auto path = dir.file("p.json");
  const auto r = run_command(tula_binary() + " profile --model small_cnn --input-shape 1x28x28 --classes 10 "
                                             "--train-samples 2000 --test-samples 400 --quick --time-budget 0.5 --out " +
                                 path,
                             300);
  // Two repeats at three batches may not fit when load from elsewhere hits
  // them: that is the documented fallback (the profile is written, exit 1),
  // and the budget's behaviour is what is checked here.
  const bool fitted = r.exit_code == 0;
  if (!fitted) {
    ASSERT_EQ(r.exit_code, 1) << r.output;
    ASSERT_NE(r.output.find("do not support a fit"), std::string::npos) << r.output;
  }
  EXPECT_NE(r.output.find("time budget 500 ms"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("plan: batches"), std::string::npos) << "the plan is stated up front\n" << r.output;
  EXPECT_NE(r.output.find("budget cut:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tula: warning: took"), std::string::npos) << "over the budget, on stderr\n" << r.output;

  const auto p = predict::load_profile(path);
  int single = 0;
  for (const auto& c : p.compute) single += c.workers_per_node == 1 ? 1 : 0;
  EXPECT_EQ(single, predict::kMinComputePoints) << "the largest batches were left out, down to the minimum";
  EXPECT_EQ(p.memory.size(), static_cast<size_t>(predict::kMinComputePoints));
  EXPECT_GE(p.allreduce.size(), static_cast<size_t>(predict::kMinAllreducePoints));
  EXPECT_EQ(p.fitted.is_null(), !fitted) << "the minimum fits unless the fit said otherwise";

  const auto j = read_json(path);
  const auto& budget = j["measurement"]["time_budget"];
  ASSERT_TRUE(budget.is_object()) << j["measurement"].dump(2);
  EXPECT_DOUBLE_EQ(budget["budget_s"].get<double>(), 0.5);
  EXPECT_EQ(budget["within"], false);
  EXPECT_GT(budget["wall_s"].get<double>(), 0.5);
  EXPECT_FALSE(budget["cuts"].empty());
  EXPECT_FALSE(j["measurement"]["warnings"].empty());
}

}  // namespace
}  // namespace tula::profile
