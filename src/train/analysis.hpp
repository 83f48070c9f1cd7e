// What Figure 5 of the Tula paper shows, measured on Tula's own runs: the
// gradient norm over the steps of a run (from its metrics) and the largest
// eigenvalue of the loss Hessian at chosen checkpoints, by power iteration on
// Hessian-vector products (double backward through autograd).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::train {

struct AnalysisOptions {
  std::vector<std::string> checkpoints;  // checkpoint files (step-N.pt or latest.pt)
  std::string metrics_path;              // `tula train --metrics` of the same run (optional)
  std::string data_dir;                  // empty: the data set's default place
  int64_t samples = 512;                 // training samples (fixed, the first ones) behind the Hessian
  int64_t max_iterations = 30;           // power-iteration steps
  double tolerance = 1e-3;               // stop when the estimate moves less than this, relatively
  uint64_t seed = 0;                     // of the start vector
  int64_t threads = 0;                   // 0: all cores
};

struct HessianEstimate {
  std::string checkpoint;
  int64_t step = 0;
  double eigenvalue = 0.0;   // largest (by magnitude) eigenvalue of the Hessian of the mean loss
  int64_t iterations = 0;
  bool converged = false;
  double gradient_norm = 0.0;  // of the same loss, at the same weights
  double loss = 0.0;
};

struct AnalysisResult {
  std::string model, dataset;
  std::vector<std::pair<int64_t, double>> gradient_norms;  // (step, |g|) from the metrics
  std::vector<HessianEstimate> hessian;
  nlohmann::json to_json() const;
};

// Throws std::runtime_error naming the file on a missing or corrupt checkpoint
// or metrics file, or checkpoints of different models.
AnalysisResult analyze(const AnalysisOptions& options);

// Two panels: gradient norm against step, and the Hessian's largest
// eigenvalue against step. Self-contained SVG; the names in its title escaped.
std::string render_analysis_svg(const AnalysisResult& result);

}  // namespace tula::train
