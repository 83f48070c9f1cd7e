#include "render/phase_bar.hpp"

#include <cmath>
#include <cstdio>

#include "common/text.hpp"
#include "render/svg_writer.hpp"

namespace tula::render {

namespace {

constexpr double kLeft = 10;

// "training 3.2 min (41.0%)".
std::string part_label(const Part& p, double total) {
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100 * p.seconds / total);
  return p.label + " " + common::format_seconds(p.seconds) + " (" + share + ")";
}

struct LegendRows {
  std::vector<std::string> labels;
  std::vector<Point> at;  // each label's swatch corner: x, and the row's baseline
  double last_row = 58;
};

// Labels in rows under the bar, wrapping at the width.
LegendRows legend_rows(const std::vector<Part>& shown, double total, double width) {
  LegendRows l;
  double x = kLeft;
  for (const auto& p : shown) {
    l.labels.push_back(part_label(p, total));
    const double w = 16 + text_width(l.labels.back()) + 20;
    if (x > kLeft && x + w > width) x = kLeft, l.last_row += 18;
    l.at.push_back({x, l.last_row});
    x += w;
  }
  return l;
}

}  // namespace

std::string phase_bar_svg(const std::vector<Part>& parts, double width) {
  std::vector<Part> shown;
  double total = 0;
  for (const auto& p : parts) {
    if (std::isfinite(p.seconds) && p.seconds > 0) shown.push_back(p), total += p.seconds;
  }
  const LegendRows legend = legend_rows(shown, total, width);
  const double height = legend.last_row + 12;
  SvgWriter s;
  s.open(width, height, "Where the time went");
  s.rect(0, 0, width, height, "fill:#fff");
  if (shown.empty()) {
    s.text(width / 2, 30, "no phase was timed", "text-anchor=\"middle\" font-size=\"13\" fill=\"#777\"");
    return s.close();
  }
  const double bar_width = width - 2 * kLeft;
  double x = kLeft;
  for (size_t i = 0; i < shown.size(); ++i) {
    const double w = shown[i].seconds / total * bar_width;
    s.rect(x, 8, w, 28, "fill:" + shown[i].color + ";stroke:#fff;stroke-width:1");
    x += w;
    const auto [lx, ly] = legend.at[i];
    s.rect(lx, ly - 9, 11, 11, "fill:" + shown[i].color);
    s.text(lx + 16, ly, legend.labels[i], "font-size=\"11\" fill=\"#333\"");
  }
  return s.close();
}

}  // namespace tula::render
