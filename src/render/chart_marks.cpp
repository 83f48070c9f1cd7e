// What goes inside a chart's plot area: bands, grid and ticks, series,
// intervals, reference lines and markers, drawn in that order so that the
// later ones stay visible over the earlier.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "render/chart_parts.hpp"

namespace tula::render::detail {

namespace {

using Points = std::vector<Point>;

// A white halo behind a label, so that lines under it do not hide it.
const char* const kHalo = " style=\"paint-order:stroke;stroke:#fff;stroke-width:3px\"";

// Keeps at most `n` points, evenly, always the last.
Points thinned(const Points& pts, size_t n) {
  if (pts.size() <= n) return pts;
  Points out;
  const size_t stride = (pts.size() + n - 1) / n;
  for (size_t i = 0; i < pts.size(); i += stride) out.push_back(pts[i]);
  if (out.back() != pts.back()) out.push_back(pts.back());
  return out;
}

// The points in pixels, leaving out those the scales cannot place.
Points mapped(const Points& pts, const Plot& p) {
  Points out;
  for (const auto& [x, y] : pts) {
    if (p.sx.drawable(x) && p.sy.drawable(y)) out.push_back({p.sx(x), p.sy(y)});
  }
  return out;
}

// Runs of points with no break between them, each drawn as its own line.
std::vector<Points> runs_of(const Points& data, const std::vector<double>& breaks) {
  std::vector<Points> runs(1);
  for (size_t i = 0; i < data.size(); ++i) {
    const bool broken = i > 0 && std::any_of(breaks.begin(), breaks.end(), [&](double b) {
                          return data[i - 1].first < b && b <= data[i].first;
                        });
    if (broken) runs.emplace_back();
    runs.back().push_back(data[i]);
  }
  return runs;
}

// A value that holds until the next point: a horizontal then a vertical move.
Points steps_of(const Points& pts) {
  Points out;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i) out.push_back({pts[i].first, pts[i - 1].second});
    out.push_back(pts[i]);
  }
  return out;
}

void draw_cloud(SvgWriter& s, const Series& se, const Plot& p) {
  for (const auto& [x, y] : mapped(thinned(se.points, 2000), p)) {
    s.circle(x, y, 1.8, "fill:" + se.color + ";fill-opacity:0.35;stroke:none");
  }
}

void draw_line_series(SvgWriter& s, const Series& se, const Plot& p) {
  const auto data = thinned(se.points, 1500);
  const bool dots_fit = se.style == Style::LineDots && data.size() <= 150;
  for (const auto& run : runs_of(data, se.breaks)) {
    auto pts = mapped(run, p);
    if (se.style == Style::Step) pts = steps_of(pts);
    if (se.style != Style::Dots) {
      s.polyline(pts, "stroke:" + se.color + ";stroke-width:2;stroke-linejoin:round" + dash(se.style == Style::Dashed));
    }
    if (se.style == Style::Dots || dots_fit || pts.size() == 1) {
      for (const auto& [x, y] : pts) s.circle(x, y, 3, "fill:" + se.color + ";stroke:#fff;stroke-width:0.8");
    }
  }
}

void draw_shape(SvgWriter& s, Shape kind, double x, double y, double r, const std::string& color) {
  const std::string filled = "fill:" + color + ";stroke:#fff;stroke-width:1";
  switch (kind) {
    case Shape::Ring:
      s.circle(x, y, r, "fill:none;stroke:" + color + ";stroke-width:2.5");
      break;
    case Shape::Diamond:
      s.polygon({{x, y - r}, {x + r, y}, {x, y + r}, {x - r, y}}, filled);
      break;
    case Shape::Square:
      s.rect(x - r * 0.75, y - r * 0.75, 1.5 * r, 1.5 * r, filled);
      break;
    case Shape::Star: {
      Points pts;
      for (int i = 0; i < 10; ++i) {
        const double a = -std::numbers::pi / 2 + i * std::numbers::pi / 5, rr = i % 2 ? r * 0.45 : r;
        pts.push_back({x + rr * std::cos(a), y + rr * std::sin(a)});
      }
      s.polygon(pts, filled);
      break;
    }
  }
}

bool placeable(const Marker& m, const Plot& p) { return p.sx.drawable(m.x) && p.sy.drawable(m.y); }

// A marker's label beside it, on the side asked for unless it would leave
// the plot area there: then on the other side (left/right), or above.
void draw_marker_label(SvgWriter& s, const Marker& m, const Plot& p) {
  const double x = p.sx(m.x), y = p.sy(m.y), w = text_width(m.label, 12);
  bool end = m.label_below_left;
  if (end && x - 11 - w < p.left) end = false;
  if (!end && x + 11 + w > p.right()) end = true;
  const bool below = m.label_below_left && y + 20 <= p.bottom() - 2;
  s.text(end ? x - 11 : x + 11, below ? y + 20 : y - 11, m.label,
         std::string("text-anchor=\"") + (end ? "end" : "start") + "\" font-size=\"12\" font-weight=\"bold\" fill=\"" +
             m.color + "\"" + kHalo);
}

}  // namespace

void draw_bands(SvgWriter& s, const Chart& c, const Plot& p) {
  for (const auto& b : c.bands) {
    const double x0 = std::clamp(p.sx(std::min(b.from, b.to)), p.left, p.right());
    const double x1 = std::clamp(p.sx(std::max(b.from, b.to)), p.left, p.right());
    if (x1 - x0 < 0.5) continue;
    s.rect(x0, p.top, x1 - x0, p.height, kBandFill);
    if (text_width(b.label, 10) < x1 - x0 - 4) {
      s.text((x0 + x1) / 2, p.bottom() - 6, b.label, "text-anchor=\"middle\" font-size=\"10\" fill=\"#8a6d1f\"");
    }
  }
}

void draw_grid(SvgWriter& s, const Chart& c, const Plot& p) {
  for (double v : p.sx.ticks()) {
    const double x = p.sx(v);
    s.line(x, p.top, x, p.bottom(), "stroke:#e4e4e4;stroke-width:1");
    s.line(x, p.bottom(), x, p.bottom() + 4, "stroke:#444;stroke-width:1");
    s.text(x, p.bottom() + 16, tick_label(v, c.x), "text-anchor=\"middle\" font-size=\"11\" fill=\"#333\"");
  }
  for (double v : p.sy.ticks()) {
    const double y = p.sy(v);
    s.line(p.left, y, p.right(), y, "stroke:#e4e4e4;stroke-width:1");
    s.line(p.left - 4, y, p.left, y, "stroke:#444;stroke-width:1");
    s.text(p.left - 7, y + 4, tick_label(v, c.y), "text-anchor=\"end\" font-size=\"11\" fill=\"#333\"");
  }
  s.text(p.left + p.width / 2, p.bottom() + 36, c.x.label + (p.sx.log() ? " (log scale)" : ""),
         "text-anchor=\"middle\" font-size=\"12\" fill=\"#222\"");
  const double yl = 16, ym = p.top + p.height / 2;
  s.text(yl, ym, c.y.label + (p.sy.log() ? " (log scale)" : ""),
         "text-anchor=\"middle\" font-size=\"12\" fill=\"#222\" transform=\"rotate(-90 " + px(yl) + " " + px(ym) + ")\"");
}

// Faint clouds first, under the lines and dots of the other series.
void draw_series(SvgWriter& s, const Chart& c, const Plot& p) {
  for (const auto& se : c.series) {
    if (se.style == Style::Faint) draw_cloud(s, se, p);
  }
  for (const auto& se : c.series) {
    if (se.style != Style::Faint) draw_line_series(s, se, p);
  }
}

void draw_intervals(SvgWriter& s, const Chart& c, const Plot& p) {
  for (const auto& i : c.intervals) {
    const auto pts = mapped({i.from, i.to}, p);
    if (pts.size() == 2) {
      s.line(pts[0].first, pts[0].second, pts[1].first, pts[1].second,
             "stroke:" + i.color + ";stroke-opacity:0.35;stroke-width:1");
    }
  }
}

void draw_rules(SvgWriter& s, const Chart& c, const Plot& p) {
  for (const auto& r : c.hlines) {
    if (!p.sy.drawable(r.at)) continue;
    const double y = p.sy(r.at);
    s.line(p.left, y, p.right(), y, "stroke:" + r.color + ";stroke-width:1.5" + dash(r.dashed));
    if (!r.in_legend && !r.label.empty()) {
      s.text(p.right() - 4, y - 4, r.label, "text-anchor=\"end\" font-size=\"10\" fill=\"" + r.color + "\"");
    }
  }
  for (const auto& r : c.vlines) {
    if (!p.sx.drawable(r.at)) continue;
    const double x = p.sx(r.at);
    s.line(x, p.top, x, p.bottom(), "stroke:" + r.color + ";stroke-width:1.5" + dash(r.dashed));
    if (r.label.empty()) continue;
    const bool fits_right = x + 4 + text_width(r.label, 10) < p.right();
    s.text(fits_right ? x + 4 : x - 4, p.top + 12, r.label,
           std::string("text-anchor=\"") + (fits_right ? "start" : "end") + "\" font-size=\"10\" fill=\"" + r.color +
               "\"" + kHalo);
  }
}

// Shapes first, then every label, so that no shape covers a label.
void draw_markers(SvgWriter& s, const Chart& c, const Plot& p) {
  for (const auto& m : c.markers) {
    if (placeable(m, p)) draw_shape(s, m.shape, p.sx(m.x), p.sy(m.y), m.shape == Shape::Ring ? 9 : 7, m.color);
  }
  for (const auto& m : c.markers) {
    if (placeable(m, p) && !m.label.empty()) draw_marker_label(s, m, p);
  }
}

}  // namespace tula::render::detail
