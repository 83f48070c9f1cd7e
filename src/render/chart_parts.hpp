// The parts a chart is drawn from, shared by chart.cpp (layout, figures)
// and the files that draw each part. Internal to src/render. No LibTorch here.
#pragma once
#include <string>
#include <vector>

#include "render/axis.hpp"
#include "render/chart.hpp"
#include "render/svg_writer.hpp"

namespace tula::render::detail {

// Pale fill of a band, in the chart and in its legend.
inline constexpr const char* kBandFill = "fill:#f0e6c8;fill-opacity:0.6;stroke:none";

// ";stroke-dasharray:..." for a dashed line, "" for a solid one.
std::string dash(bool dashed);

struct LegendEntry {
  std::string label;
  std::string color;
  Style style = Style::Line;
  bool dashed = false;
  bool band = false;
};

// The legend's entries, each with its place: x, and the row under the title.
struct Legend {
  std::vector<LegendEntry> entries;
  std::vector<std::pair<double, int>> at;
  int rows = 0;
};

Legend legend_of(const Chart& chart, double left, double right_edge);
void draw_legend(SvgWriter& svg, const Legend& legend);
// The y of a legend row's baseline.
double legend_row_y(int row);

// Where the plot area lies in the chart, and its scales.
struct Plot {
  double left = 0, top = 0, width = 0, height = 0;
  Scale sx, sy;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

void draw_bands(SvgWriter& svg, const Chart& chart, const Plot& plot);
void draw_grid(SvgWriter& svg, const Chart& chart, const Plot& plot);
void draw_series(SvgWriter& svg, const Chart& chart, const Plot& plot);
void draw_intervals(SvgWriter& svg, const Chart& chart, const Plot& plot);
void draw_rules(SvgWriter& svg, const Chart& chart, const Plot& plot);
void draw_markers(SvgWriter& svg, const Chart& chart, const Plot& plot);

}  // namespace tula::render::detail
