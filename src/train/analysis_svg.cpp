// The analysis figure: two panels side by side, gradient norm against step and
// the Hessian's largest eigenvalue against step (points joined by a line).
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "train/analysis.hpp"

namespace tula::train {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// One panel at (x0, y0) of size w x h: frame, min/max labels on both axes,
// the series as a polyline with dots.
void panel(std::ostringstream& svg, double x0, double y0, double w, double h, const std::string& title,
           const std::string& y_label, const std::vector<std::pair<double, double>>& points, const char* colour) {
  svg << "<text x='" << x0 + w / 2 << "' y='" << y0 - 10 << "' text-anchor='middle' font-size='14'>" << title
      << "</text>\n";
  svg << "<rect x='" << x0 << "' y='" << y0 << "' width='" << w << "' height='" << h
      << "' fill='none' stroke='#444'/>\n";
  svg << "<text x='" << x0 + w / 2 << "' y='" << y0 + h + 34 << "' text-anchor='middle' font-size='12'>step</text>\n";
  svg << "<text x='" << x0 - 48 << "' y='" << y0 + h / 2 << "' text-anchor='middle' font-size='12' transform='rotate(-90 "
      << x0 - 48 << ' ' << y0 + h / 2 << ")'>" << y_label << "</text>\n";
  if (points.empty()) {
    svg << "<text x='" << x0 + w / 2 << "' y='" << y0 + h / 2 << "' text-anchor='middle' font-size='12' fill='#888'>"
        << "no data</text>\n";
    return;
  }
  double xmin = points.front().first, xmax = xmin, ymin = points.front().second, ymax = ymin;
  for (const auto& [x, y] : points) {
    xmin = std::min(xmin, x);
    xmax = std::max(xmax, x);
    ymin = std::min(ymin, y);
    ymax = std::max(ymax, y);
  }
  ymin = std::min(ymin, 0.0);
  if (xmax == xmin) xmax = xmin + 1;
  if (ymax == ymin) ymax = ymin + 1;
  auto px = [&](double x) { return x0 + (x - xmin) / (xmax - xmin) * w; };
  auto py = [&](double y) { return y0 + h - (y - ymin) / (ymax - ymin) * h; };
  svg << "<text x='" << x0 << "' y='" << y0 + h + 16 << "' font-size='11'>" << number(xmin) << "</text>\n";
  svg << "<text x='" << x0 + w << "' y='" << y0 + h + 16 << "' text-anchor='end' font-size='11'>" << number(xmax)
      << "</text>\n";
  svg << "<text x='" << x0 - 4 << "' y='" << y0 + h << "' text-anchor='end' font-size='11'>" << number(ymin)
      << "</text>\n";
  svg << "<text x='" << x0 - 4 << "' y='" << y0 + 10 << "' text-anchor='end' font-size='11'>" << number(ymax)
      << "</text>\n";
  svg << "<polyline fill='none' stroke='" << colour << "' stroke-width='1.5' points='";
  for (const auto& [x, y] : points) svg << px(x) << ',' << py(y) << ' ';
  svg << "'/>\n";
  if (points.size() <= 60) {
    for (const auto& [x, y] : points) {
      svg << "<circle cx='" << px(x) << "' cy='" << py(y) << "' r='3' fill='" << colour << "'/>\n";
    }
  }
}

}  // namespace

std::string render_analysis_svg(const AnalysisResult& r) {
  std::vector<std::pair<double, double>> norms, eigen;
  for (const auto& [step, norm] : r.gradient_norms) norms.emplace_back(static_cast<double>(step), norm);
  if (norms.empty()) {  // no metrics: the norms measured at the checkpoints
    for (const auto& h : r.hessian) norms.emplace_back(static_cast<double>(h.step), h.gradient_norm);
  }
  for (const auto& h : r.hessian) eigen.emplace_back(static_cast<double>(h.step), h.eigenvalue);
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='360' font-family='sans-serif'>\n"
      << "<rect width='900' height='360' fill='white'/>\n"
      << "<text x='450' y='22' text-anchor='middle' font-size='15'>" << r.model << " on " << r.dataset << "</text>\n";
  panel(svg, 80, 60, 330, 240, "gradient norm", "|g|", norms, "#1f77b4");
  panel(svg, 530, 60, 330, 240, "largest Hessian eigenvalue", "lambda_max", eigen, "#d62728");
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace tula::train
