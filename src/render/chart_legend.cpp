// A chart's legend: one entry per named series, per horizontal rule labelled
// in the legend, and one for the bands; laid out in rows under the title.
#include "render/chart_parts.hpp"

namespace tula::render::detail {

namespace {

std::vector<LegendEntry> entries_of(const Chart& c) {
  std::vector<LegendEntry> out;
  for (const auto& se : c.series) {
    if (!se.name.empty()) out.push_back({se.name, se.color, se.style});
  }
  for (const auto& r : c.hlines) {
    if (r.in_legend && !r.label.empty()) out.push_back({r.label, r.color, Style::Line, r.dashed});
  }
  if (!c.bands.empty() && !c.band_legend.empty()) out.push_back({c.band_legend, "", Style::Line, false, true});
  return out;
}

// A short sample of how the entry is drawn, 20 px wide, ending at (x + 20, y).
void swatch(SvgWriter& s, const LegendEntry& e, double x, double y) {
  if (e.band) {
    s.rect(x + 3, y - 10, 14, 12, kBandFill);
    return;
  }
  switch (e.style) {
    case Style::Dots:
      s.circle(x + 10, y - 4, 3.5, "fill:" + e.color);
      break;
    case Style::Faint:
      s.circle(x + 10, y - 4, 2.5, "fill:" + e.color + ";fill-opacity:0.5");
      break;
    default:
      s.line(x, y - 4, x + 20, y - 4, "stroke:" + e.color + ";stroke-width:2" + dash(e.dashed || e.style == Style::Dashed));
      if (e.style == Style::LineDots) s.circle(x + 10, y - 4, 3, "fill:" + e.color);
  }
}

}  // namespace

std::string dash(bool dashed) { return dashed ? ";stroke-dasharray:5,4" : ""; }

double legend_row_y(int row) { return 30 + 17 * row + 12; }

Legend legend_of(const Chart& chart, double left, double right_edge) {
  Legend l;
  l.entries = entries_of(chart);
  double x = left;
  int row = 0;
  for (const auto& e : l.entries) {
    const double w = 26 + text_width(e.label) + 16;
    if (x > left && x + w > right_edge) x = left, row += 1;  // wrap, unless the entry is first in its row
    l.at.push_back({x, row});
    x += w;
  }
  l.rows = l.entries.empty() ? 0 : row + 1;
  return l;
}

void draw_legend(SvgWriter& svg, const Legend& legend) {
  for (size_t i = 0; i < legend.entries.size(); ++i) {
    const auto [x, row] = legend.at[i];
    const double y = legend_row_y(row);
    swatch(svg, legend.entries[i], x, y);
    svg.text(x + 26, y, legend.entries[i].label, "font-size=\"11\" fill=\"#333\"");
  }
}

}  // namespace tula::render::detail
