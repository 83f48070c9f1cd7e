// The analysis figure: two panels side by side, the gradient norm against
// step and the Hessian's largest eigenvalue against step, drawn with
// src/render (which escapes the model's and data set's names in the title).
#include <string>
#include <utility>
#include <vector>

#include "render/chart.hpp"
#include "train/analysis.hpp"

namespace tula::train {
namespace {

using Points = std::vector<std::pair<double, double>>;

// Linear axes from zero: a norm and a curvature are read against zero.
render::Chart panel(std::string title, std::string y_label, Points points, const char* colour) {
  render::Chart c;
  c.title = std::move(title);
  c.x = {"step", render::Unit::Number, "USD", render::ScaleKind::Linear};
  c.y = {std::move(y_label), render::Unit::Number, "USD", render::ScaleKind::Linear, true};
  c.series = {{"", std::move(points), colour, render::Style::LineDots}};
  c.empty_text = "no data";
  c.width = 450;
  c.plot_height = 240;
  return c;
}

// The norms from the run's metrics; without metrics, those measured at the checkpoints.
Points gradient_norms(const AnalysisResult& r) {
  Points out;
  for (const auto& [step, norm] : r.gradient_norms) out.emplace_back(static_cast<double>(step), norm);
  if (out.empty()) {
    for (const auto& h : r.hessian) out.emplace_back(static_cast<double>(h.step), h.gradient_norm);
  }
  return out;
}

}  // namespace

std::string render_analysis_svg(const AnalysisResult& r) {
  Points eigen;
  for (const auto& h : r.hessian) eigen.emplace_back(static_cast<double>(h.step), h.eigenvalue);
  render::Figure f;
  f.title = r.model + " on " + r.dataset;
  f.panels = {panel("gradient norm", "|g|", gradient_norms(r), "#1f77b4"),
              panel("largest Hessian eigenvalue", "lambda_max", std::move(eigen), "#d62728")};
  return render::figure_svg(f);
}

}  // namespace tula::train
