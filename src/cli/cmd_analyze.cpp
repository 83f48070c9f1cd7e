// `tula analyze`: gradient norms over a run and the largest Hessian eigenvalue
// at its kept checkpoints (the two quantities of the Tula paper's Figure 5),
// as JSON and an SVG figure.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <regex>
#include <string>

#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "train/analysis.hpp"

namespace tula::cli {
namespace {

namespace fs = std::filesystem;

struct AnalyzeCommand {
  train::AnalysisOptions options;
  std::vector<std::string> checkpoints;
  std::string out = "analysis.json";
  std::string svg;
};

// A directory stands for its kept checkpoints (step-N.pt), in step order.
std::vector<std::string> expand(const std::vector<std::string>& given) {
  std::vector<std::string> files;
  const std::regex kept("step-([0-9]+)\\.pt");
  for (const auto& g : given) {
    if (!fs::is_directory(g)) {
      files.push_back(g);
      continue;
    }
    std::vector<std::pair<long long, std::string>> found;
    for (const auto& entry : fs::directory_iterator(g)) {
      std::smatch m;
      const std::string name = entry.path().filename().string();
      if (std::regex_match(name, m, kept)) found.emplace_back(std::stoll(m[1]), entry.path().string());
    }
    if (found.empty()) {
      throw std::invalid_argument("analyze: " + g + " holds no step-N.pt checkpoints (train with --keep-checkpoints)");
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found) files.push_back(f.second);
  }
  return files;
}

void run(const AnalyzeCommand& cmd) {
  auto options = cmd.options;
  options.checkpoints = expand(cmd.checkpoints);
  const auto result = train::analyze(options);
  common::write_file_atomically(cmd.out, result.to_json().dump(2) + "\n");
  if (!cmd.svg.empty()) common::write_file_atomically(cmd.svg, train::render_analysis_svg(result));
  std::cout << "step        loss   |gradient|   lambda_max  (power iterations)\n";
  for (const auto& h : result.hessian) {
    std::printf("%-8lld %9.4f %12.4g %12.4g  (%lld%s)\n", static_cast<long long>(h.step), h.loss, h.gradient_norm,
                h.eigenvalue, static_cast<long long>(h.iterations), h.converged ? "" : ", not converged");
  }
  std::cout << "wrote " << cmd.out << (cmd.svg.empty() ? "" : " and " + cmd.svg) << "\n";
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto cmd = std::make_shared<AnalyzeCommand>();
  auto* sub = app.add_subcommand("analyze", "Gradient norms and the Hessian's largest eigenvalue along a run");
  sub->add_option("checkpoints", cmd->checkpoints,
                  "Checkpoint files, or directories of step-N.pt (tula train --keep-checkpoints)")
      ->required();
  sub->add_option("--metrics", cmd->options.metrics_path, "The run's `tula train --metrics` file: gradient norm per step");
  sub->add_option("--data-dir", cmd->options.data_dir, "Directory of the data set (default: its usual place)");
  sub->add_option("--samples", cmd->options.samples, "Training samples behind the Hessian (the first ones)")
      ->capture_default_str();
  sub->add_option("--iterations", cmd->options.max_iterations, "Most power-iteration steps")->capture_default_str();
  sub->add_option("--tolerance", cmd->options.tolerance, "Relative change that ends the iteration")->capture_default_str();
  sub->add_option("--seed", cmd->options.seed, "Seed of the start vector")->capture_default_str();
  sub->add_option("--threads", cmd->options.threads, "Intra-op threads (0: all cores)")->capture_default_str();
  sub->add_option("-o,--out", cmd->out, "JSON to write")->capture_default_str();
  sub->add_option("--svg", cmd->svg, "SVG figure to write");
  sub->footer(
      "\nThe eigenvalue is the largest in magnitude of the Hessian of the mean training loss on\n"
      "--samples fixed samples, in evaluation mode (no dropout, batch norm with running\n"
      "statistics), by power iteration on Hessian-vector products (double backward).\n\n"
      "Example:\n"
      "  tula train --model small_cnn --checkpoint-dir run --checkpoint-every 50 --keep-checkpoints --metrics run.jsonl\n"
      "  tula analyze run --metrics run.jsonl --out analysis.json --svg analysis.svg");
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
