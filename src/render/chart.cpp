#include "render/chart.hpp"

#include <algorithm>
#include <cmath>

#include "render/chart_parts.hpp"

namespace tula::render {

namespace {

using detail::Legend;
using detail::Plot;

constexpr double kLeft = 80, kRight = 24;  // room for the y tick labels and axis label; a margin
constexpr double kBelow = 48;              // room for the x tick labels and axis label
constexpr double kFigureTitle = 40, kNoteLine = 18;

// Where a chart's parts go.
struct Layout {
  Legend legend;
  Plot plot;
  double height = 0;
  bool empty = true;  // no series has a point and there is no marker
};

// The values the scales must cover: everything drawn, not only the series.
std::pair<std::vector<double>, std::vector<double>> extent(const Chart& c) {
  std::vector<double> xs, ys;
  for (const auto& se : c.series) {
    for (const auto& [x, y] : se.points) {
      if (std::isfinite(x) && std::isfinite(y)) xs.push_back(x), ys.push_back(y);
    }
  }
  for (const auto& m : c.markers) xs.push_back(m.x), ys.push_back(m.y);
  for (const auto& i : c.intervals) {
    xs.insert(xs.end(), {i.from.first, i.to.first});
    ys.insert(ys.end(), {i.from.second, i.to.second});
  }
  for (const auto& r : c.hlines) ys.push_back(r.at);
  for (const auto& r : c.vlines) xs.push_back(r.at);
  for (const auto& b : c.bands) xs.insert(xs.end(), {b.from, b.to});
  return {xs, ys};
}

bool has_points(const Chart& c) {
  return !c.markers.empty() || std::any_of(c.series.begin(), c.series.end(), [](const Series& se) {
           return std::any_of(se.points.begin(), se.points.end(),
                              [](const auto& p) { return std::isfinite(p.first) && std::isfinite(p.second); });
         });
}

// Puts the plot area's top at `top` and fits the scales to it.
void place_plot(Layout& l, const Chart& c, double top) {
  l.plot.top = top;
  l.height = top + l.plot.height + kBelow;
  const auto [xs, ys] = extent(c);
  l.plot.sx = Scale::fit(xs, c.x, l.plot.left, l.plot.right());
  l.plot.sy = Scale::fit(ys, c.y, l.plot.bottom(), l.plot.top);
}

// The legend's rows under the title set where the plot area starts.
Layout layout_of(const Chart& c) {
  Layout l;
  l.legend = detail::legend_of(c, kLeft, c.width - kRight);
  l.plot.left = kLeft;
  l.plot.width = c.width - kLeft - kRight;
  l.plot.height = c.plot_height;
  l.empty = !has_points(c);
  place_plot(l, c, 40 + 17.0 * l.legend.rows);  // under the title and the legend's rows
  return l;
}

void draw_empty(SvgWriter& s, const Chart& c, const Plot& p) {
  s.rect(p.left, p.top, p.width, p.height, "fill:none;stroke:#999");
  s.text(p.left + p.width / 2, p.top + p.height / 2, c.empty_text,
         "text-anchor=\"middle\" font-size=\"13\" fill=\"#777\"");
}

void draw_chart(SvgWriter& s, const Chart& c, const Layout& l) {
  const Plot& p = l.plot;
  s.rect(0, 0, c.width, l.height, "fill:#fff");
  s.text(p.left, 20, c.title, "font-size=\"14\" font-weight=\"bold\" fill=\"#222\"");
  detail::draw_legend(s, l.legend);
  s.rect(p.left, p.top, p.width, p.height, "fill:#fcfcfc;stroke:none");
  if (l.empty) {
    draw_empty(s, c, p);
    return;
  }
  detail::draw_bands(s, c, p);
  detail::draw_grid(s, c, p);
  detail::draw_series(s, c, p);
  detail::draw_intervals(s, c, p);
  detail::draw_rules(s, c, p);
  detail::draw_markers(s, c, p);
  s.rect(p.left, p.top, p.width, p.height, "fill:none;stroke:#444;stroke-width:1");
}

// The panels' layouts with their plot areas at one height, so that the
// panels read as one row whatever their legends.
std::vector<Layout> level_layouts(const std::vector<Chart>& panels) {
  std::vector<Layout> out;
  double top = 0;
  for (const auto& c : panels) {
    out.push_back(layout_of(c));
    top = std::max(top, out.back().plot.top);
  }
  for (size_t i = 0; i < panels.size(); ++i) place_plot(out[i], panels[i], top);
  return out;
}

}  // namespace

std::string chart_svg(const Chart& chart) {
  const Layout l = layout_of(chart);
  SvgWriter s;
  s.open(chart.width, l.height, chart.title);
  draw_chart(s, chart, l);
  return s.close();
}

std::string figure_svg(const Figure& f) {
  const auto layouts = level_layouts(f.panels);
  double width = 0, panels_height = 0;
  for (size_t i = 0; i < f.panels.size(); ++i) {
    width += f.panels[i].width;
    panels_height = std::max(panels_height, layouts[i].height);
  }
  width = std::max(width, 400.0);
  const double notes_top = kFigureTitle + panels_height;
  const double height = notes_top + kNoteLine * static_cast<double>(f.notes.size()) + 10;
  SvgWriter s;
  s.open(width, height, f.title);
  s.rect(0, 0, width, height, "fill:#fff");
  s.text(24, 28, f.title, "font-size=\"16\" font-weight=\"bold\" fill=\"#222\"");
  double x = 0;
  for (size_t i = 0; i < f.panels.size(); ++i) {
    s.begin_group(x, kFigureTitle);
    draw_chart(s, f.panels[i], layouts[i]);
    s.end_group();
    x += f.panels[i].width;
  }
  for (size_t i = 0; i < f.notes.size(); ++i) {
    s.text(24, notes_top + kNoteLine * static_cast<double>(i + 1) - 4, f.notes[i], "font-size=\"12\" fill=\"#333\"");
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + s.close();
}

}  // namespace tula::render
