#include "tune/report_charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <sstream>

#include "common/text.hpp"
#include "tune/html.hpp"

namespace tula::tune::charts {

namespace {

using html::escape;

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// About how wide a label is at `font` px (sans-serif averages ~0.56 em).
double text_width(const std::string& s, double font = 11) { return 0.56 * font * static_cast<double>(s.size()); }

const char* kFont = "Helvetica, Arial, sans-serif";

std::string duration_label(double v) {
  const double a = std::abs(v);
  if (a == 0) return "0";
  if (a < 60) return common::format_seconds(v);
  if (a < 3600) return common::format_number(v / 60, 3) + " min";
  if (a < 2 * 86400) return common::format_number(v / 3600, 3) + " h";
  return common::format_number(v / 86400, 3) + " d";
}

std::string tick_label(double v, const Axis& axis) {
  switch (axis.unit) {
    case Unit::Seconds:
      return duration_label(v);
    case Unit::Percent:
      return common::format_number(100 * v, 4) + "%";
    case Unit::Money: {
      const std::string n = common::format_number(std::abs(v), 3);
      if (axis.currency.empty() || axis.currency == "USD") return (v < 0 ? "-$" : "$") + n;
      return (v < 0 ? "-" : "") + n + " " + axis.currency;
    }
    case Unit::Number:
      break;
  }
  return common::format_number(v, 6);
}

// Maps data onto pixels [p0, p1] (p1 < p0 for a y axis).
struct Scale {
  bool log = false;
  double lo = 0, hi = 1;  // in data units, log10 of them on a log scale
  double p0 = 0, p1 = 1;
  Axis axis;

  static Scale fit(std::vector<double> values, const Axis& axis, double p0, double p1) {
    Scale s;
    s.axis = axis, s.p0 = p0, s.p1 = p1;
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
                 values.end());
    if (values.empty()) return s;
    const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
    double lo = *mn, hi = *mx;
    if (axis.log_allowed && lo > 0 && hi / lo > 20) {
      s.log = true;
      const double pad = 0.04 * (std::log10(hi) - std::log10(lo));
      s.lo = std::log10(lo) - pad, s.hi = std::log10(hi) + pad;
      return s;
    }
    if (axis.from_zero && lo >= 0) lo = 0;
    if (hi == lo) {
      const double d = hi == 0 ? 1 : std::abs(hi) * 0.1;
      lo = (axis.from_zero && lo >= 0) ? 0 : lo - d;
      hi += d;
    }
    const double pad = 0.05 * (hi - lo);
    s.lo = (axis.from_zero && lo == 0) ? 0 : lo - pad;
    s.hi = hi + pad;
    return s;
  }

  double operator()(double v) const {
    const double d = log ? std::log10(std::max(v, 1e-300)) : v;
    return p0 + (d - lo) / (hi - lo) * (p1 - p0);
  }
  bool inside(double v) const {
    const double d = log ? std::log10(v) : v;
    return d >= lo - 1e-9 * std::abs(lo) && d <= hi + 1e-9 * std::abs(hi);
  }

  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      std::vector<std::vector<double>> choices;
      if (axis.unit == Unit::Seconds) {
        choices.push_back({1e-3, 2e-3, 5e-3, 0.01,     0.02,     0.05,      0.1,   0.2,       0.5,       1,
                           2,    5,    10,   20,       30,       60,        120,   300,       600,       1200,
                           1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 30 * 86400});
        choices.push_back({1e-3, 0.01, 0.1, 1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400});
      }
      for (const auto& mantissas : {std::vector<double>{1, 2, 5}, std::vector<double>{1, 3}, std::vector<double>{1}}) {
        std::vector<double> c;
        for (int e = static_cast<int>(std::floor(lo)); e <= static_cast<int>(std::ceil(hi)); ++e) {
          for (double m : mantissas) c.push_back(m * std::pow(10.0, e));
        }
        choices.push_back(c);
      }
      for (const auto& c : choices) {
        t.clear();
        for (double v : c) {
          if (inside(v)) t.push_back(v);
        }
        if (t.size() <= 8) break;
      }
      if (t.size() > 8) {  // many decades: every k-th
        std::vector<double> thin;
        const size_t k = (t.size() + 7) / 8;
        for (size_t i = 0; i < t.size(); i += k) thin.push_back(t[i]);
        t = thin;
      }
      return t;
    }
    const double raw = (hi - lo) / 6;
    double step = 0;
    if (axis.unit == Unit::Seconds && raw >= 1) {
      for (double s : {1.0,        2.0,        5.0,         10.0,    15.0,        20.0,       30.0,   60.0,
                       120.0,      300.0,      600.0,       900.0,   1200.0,      1800.0,     3600.0, 7200.0,
                       3 * 3600.0, 6 * 3600.0, 12 * 3600.0, 86400.0, 2 * 86400.0, 7 * 86400.0}) {
        if (s >= raw) {
          step = s;
          break;
        }
      }
    }
    if (step == 0) {
      const double mag = std::pow(10.0, std::floor(std::log10(raw)));
      for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * mag >= raw) {
          step = m * mag;
          break;
        }
      }
    }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
      t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    }
    return t;
  }
};

std::string dash(bool dashed) { return dashed ? ";stroke-dasharray:5,4" : ""; }

struct Svg {
  std::ostringstream o;
  void line(double x1, double y1, double x2, double y2, const std::string& style) {
    o << "<line x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\"" << px(x2) << "\" y2=\"" << px(y2)
      << "\" style=\"" << style << "\"/>\n";
  }
  void rect(double x, double y, double w, double h, const std::string& style) {
    o << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w) << "\" height=\"" << px(h)
      << "\" style=\"" << style << "\"/>\n";
  }
  void circle(double x, double y, double r, const std::string& style) {
    o << "<circle cx=\"" << px(x) << "\" cy=\"" << px(y) << "\" r=\"" << px(r) << "\" style=\"" << style << "\"/>\n";
  }
  void polygon(const std::vector<std::pair<double, double>>& pts, const std::string& style) {
    o << "<polygon points=\"";
    for (const auto& [x, y] : pts) o << px(x) << "," << px(y) << " ";
    o << "\" style=\"" << style << "\"/>\n";
  }
  void polyline(const std::vector<std::pair<double, double>>& pts, const std::string& style) {
    if (pts.size() < 2) return;
    o << "<polyline points=\"";
    for (const auto& [x, y] : pts) o << px(x) << "," << px(y) << " ";
    o << "\" style=\"fill:none;" << style << "\"/>\n";
  }
  // `attrs` are trusted (built here); `s` is escaped.
  void text(double x, double y, const std::string& s, const std::string& attrs = "") {
    o << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\"" << (attrs.empty() ? "" : " ") << attrs << ">" << escape(s)
      << "</text>\n";
  }
  void open(double w, double h, const std::string& title) {
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(w) << "\" height=\"" << px(h) << "\" viewBox=\"0 0 "
      << px(w) << " " << px(h) << "\" font-family=\"" << kFont << "\" role=\"img\">\n"
      << "<title>" << escape(title) << "</title>\n";
  }
  std::string close() {
    o << "</svg>\n";
    return o.str();
  }
};

void shape(Svg& s, Shape kind, double x, double y, double r, const std::string& color) {
  switch (kind) {
    case Shape::Ring:
      s.circle(x, y, r, "fill:none;stroke:" + color + ";stroke-width:2.5");
      break;
    case Shape::Diamond:
      s.polygon({{x, y - r}, {x + r, y}, {x, y + r}, {x - r, y}}, "fill:" + color + ";stroke:#fff;stroke-width:1");
      break;
    case Shape::Square:
      s.rect(x - r * 0.75, y - r * 0.75, 1.5 * r, 1.5 * r, "fill:" + color + ";stroke:#fff;stroke-width:1");
      break;
    case Shape::Star: {
      std::vector<std::pair<double, double>> pts;
      for (int i = 0; i < 10; ++i) {
        const double a = -std::numbers::pi / 2 + i * std::numbers::pi / 5, rr = i % 2 ? r * 0.45 : r;
        pts.push_back({x + rr * std::cos(a), y + rr * std::sin(a)});
      }
      s.polygon(pts, "fill:" + color + ";stroke:#fff;stroke-width:1");
      break;
    }
  }
}

// Keeps at most `n` points, evenly, always the last.
std::vector<std::pair<double, double>> thinned(const std::vector<std::pair<double, double>>& pts, size_t n) {
  if (pts.size() <= n) return pts;
  std::vector<std::pair<double, double>> out;
  const size_t stride = (pts.size() + n - 1) / n;
  for (size_t i = 0; i < pts.size(); i += stride) out.push_back(pts[i]);
  if (out.back() != pts.back()) out.push_back(pts.back());
  return out;
}

bool finite(const std::pair<double, double>& p) { return std::isfinite(p.first) && std::isfinite(p.second); }

struct LegendItem {
  std::string label;
  std::string color;
  Style style;
  bool dashed = false;
  bool band = false;
};

const char* const kBandFill = "fill:#f0e6c8;fill-opacity:0.6;stroke:none";

void swatch(Svg& s, const LegendItem& item, double x, double y) {
  if (item.band) {
    s.rect(x + 3, y - 10, 14, 12, kBandFill);
    return;
  }
  switch (item.style) {
    case Style::Dots:
    case Style::Faint:
      s.circle(x + 10, y - 4, item.style == Style::Faint ? 2.5 : 3.5,
               "fill:" + item.color + (item.style == Style::Faint ? ";fill-opacity:0.5" : ""));
      break;
    default:
      s.line(x, y - 4, x + 20, y - 4,
             "stroke:" + item.color + ";stroke-width:2" + dash(item.dashed || item.style == Style::Dashed));
      if (item.style == Style::LineDots) s.circle(x + 10, y - 4, 3, "fill:" + item.color);
  }
}

}  // namespace

std::string render(const Chart& c) {
  // Legend items and their rows.
  std::vector<LegendItem> legend;
  for (const auto& se : c.series) {
    if (!se.name.empty()) legend.push_back({se.name, se.color, se.style});
  }
  for (const auto& r : c.hlines) {
    if (r.in_legend && !r.label.empty()) legend.push_back({r.label, r.color, Style::Line, r.dashed});
  }
  if (!c.bands.empty() && !c.band_legend.empty()) legend.push_back({c.band_legend, "", Style::Line, false, true});
  const double left = 80, right = 24, W = c.width;
  std::vector<std::pair<double, double>> legend_at;  // x, row
  double lx = left, row = 0;
  for (const auto& item : legend) {
    const double w = 26 + text_width(item.label) + 16;
    if (lx > left && lx + w > W - right) lx = left, row += 1;
    legend_at.push_back({lx, row});
    lx += w;
  }
  const double rows = legend.empty() ? 0 : row + 1;
  const double top = 30 + 17 * rows + 10, ph = c.plot_height, pw = W - left - right;
  const double H = top + ph + 48;

  // Scales over everything drawn.
  std::vector<double> xs, ys;
  bool any = false;
  for (const auto& se : c.series) {
    for (const auto& p : se.points) {
      if (!finite(p)) continue;
      xs.push_back(p.first), ys.push_back(p.second), any = true;
    }
  }
  for (const auto& m : c.markers) xs.push_back(m.x), ys.push_back(m.y);
  for (const auto& r : c.hlines) ys.push_back(r.at);
  for (const auto& r : c.vlines) xs.push_back(r.at);
  for (const auto& b : c.bands) xs.push_back(b.from), xs.push_back(b.to);
  const Scale sx = Scale::fit(xs, c.x, left, left + pw);
  const Scale sy = Scale::fit(ys, c.y, top + ph, top);

  Svg s;
  s.open(W, H, c.title);
  s.rect(0, 0, W, H, "fill:#fff");
  s.text(left, 20, c.title, "font-size=\"14\" font-weight=\"bold\" fill=\"#222\"");
  for (size_t i = 0; i < legend.size(); ++i) {
    const auto [x, r] = legend_at[i];
    const double y = 30 + 17 * r + 12;
    swatch(s, legend[i], x, y);
    s.text(x + 26, y, legend[i].label, "font-size=\"11\" fill=\"#333\"");
  }
  s.rect(left, top, pw, ph, "fill:#fcfcfc;stroke:none");

  if (!any && c.markers.empty()) {
    s.rect(left, top, pw, ph, "fill:none;stroke:#999");
    s.text(left + pw / 2, top + ph / 2, c.empty_text, "text-anchor=\"middle\" font-size=\"13\" fill=\"#777\"");
    return s.close();
  }

  // Bands under everything.
  for (const auto& b : c.bands) {
    const double x0 = std::clamp(sx(std::min(b.from, b.to)), left, left + pw);
    const double x1 = std::clamp(sx(std::max(b.from, b.to)), left, left + pw);
    if (x1 - x0 < 0.5) continue;
    s.rect(x0, top, x1 - x0, ph, kBandFill);
    if (text_width(b.label, 10) < x1 - x0 - 4) {
      s.text((x0 + x1) / 2, top + ph - 6, b.label, "text-anchor=\"middle\" font-size=\"10\" fill=\"#8a6d1f\"");
    }
  }

  // Grid and tick labels.
  for (double v : sx.ticks()) {
    const double x = sx(v);
    s.line(x, top, x, top + ph, "stroke:#e4e4e4;stroke-width:1");
    s.line(x, top + ph, x, top + ph + 4, "stroke:#444;stroke-width:1");
    s.text(x, top + ph + 16, tick_label(v, c.x), "text-anchor=\"middle\" font-size=\"11\" fill=\"#333\"");
  }
  for (double v : sy.ticks()) {
    const double y = sy(v);
    s.line(left, y, left + pw, y, "stroke:#e4e4e4;stroke-width:1");
    s.line(left - 4, y, left, y, "stroke:#444;stroke-width:1");
    s.text(left - 7, y + 4, tick_label(v, c.y), "text-anchor=\"end\" font-size=\"11\" fill=\"#333\"");
  }
  s.text(left + pw / 2, top + ph + 36, c.x.label + (sx.log ? " (log scale)" : ""),
         "text-anchor=\"middle\" font-size=\"12\" fill=\"#222\"");
  const double yl = 16, ym = top + ph / 2;
  s.text(
      yl, ym, c.y.label + (sy.log ? " (log scale)" : ""),
      "text-anchor=\"middle\" font-size=\"12\" fill=\"#222\" transform=\"rotate(-90 " + px(yl) + " " + px(ym) + ")\"");

  // Series: faint clouds first, then lines, then dots.
  auto mapped = [&](const std::vector<std::pair<double, double>>& pts) {
    std::vector<std::pair<double, double>> out;
    for (const auto& p : pts) {
      if (finite(p) && (!sx.log || p.first > 0) && (!sy.log || p.second > 0))
        out.push_back({sx(p.first), sy(p.second)});
    }
    return out;
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& se : c.series) {
      const bool faint = se.style == Style::Faint;
      if ((pass == 0) != faint) continue;
      if (faint) {
        for (const auto& [x, y] : mapped(thinned(se.points, 2000))) {
          s.circle(x, y, 1.8, "fill:" + se.color + ";fill-opacity:0.35;stroke:none");
        }
        continue;
      }
      // Runs of points not separated by a break, each its own line.
      const auto data = thinned(se.points, 1500);
      std::vector<std::vector<std::pair<double, double>>> runs(1);
      for (size_t i = 0; i < data.size(); ++i) {
        const bool broken = i > 0 && std::any_of(se.breaks.begin(), se.breaks.end(),
                                                 [&](double b) { return data[i - 1].first < b && b <= data[i].first; });
        if (broken) runs.emplace_back();
        runs.back().push_back(data[i]);
      }
      size_t drawn = 0;
      for (const auto& run : runs) drawn += run.size();
      for (const auto& run : runs) {
        auto pts = mapped(run);
        if (se.style == Style::Step) {
          std::vector<std::pair<double, double>> st;
          for (size_t i = 0; i < pts.size(); ++i) {
            if (i) st.push_back({pts[i].first, pts[i - 1].second});
            st.push_back(pts[i]);
          }
          pts = st;
        }
        if (se.style != Style::Dots) {
          s.polyline(pts,
                     "stroke:" + se.color + ";stroke-width:2;stroke-linejoin:round" + dash(se.style == Style::Dashed));
        }
        if (se.style == Style::Dots || (se.style == Style::LineDots && drawn <= 150) || pts.size() == 1) {
          for (const auto& [x, y] : pts) s.circle(x, y, 3, "fill:" + se.color + ";stroke:#fff;stroke-width:0.8");
        }
      }
    }
  }

  // Reference lines.
  for (const auto& r : c.hlines) {
    const double y = sy(r.at);
    s.line(left, y, left + pw, y, "stroke:" + r.color + ";stroke-width:1.5" + dash(r.dashed));
    if (!r.in_legend && !r.label.empty()) {
      s.text(left + pw - 4, y - 4, r.label, "text-anchor=\"end\" font-size=\"10\" fill=\"" + r.color + "\"");
    }
  }
  for (const auto& r : c.vlines) {
    const double x = sx(r.at);
    s.line(x, top, x, top + ph, "stroke:" + r.color + ";stroke-width:1.5" + dash(r.dashed));
    if (!r.label.empty()) {
      const bool fits_right = x + 4 + text_width(r.label, 10) < left + pw;
      s.text(fits_right ? x + 4 : x - 4, top + 12, r.label,
             std::string("text-anchor=\"") + (fits_right ? "start" : "end") + "\" font-size=\"10\" fill=\"" + r.color +
                 "\" style=\"paint-order:stroke;stroke:#fff;stroke-width:3px\"");
    }
  }

  // Markers and their labels (with a white halo so lines do not hide them).
  for (const auto& m : c.markers) {
    if (!std::isfinite(m.x) || !std::isfinite(m.y)) continue;
    const double x = sx(m.x), y = sy(m.y);
    shape(s, m.shape, x, y, m.shape == Shape::Ring ? 9 : 7, m.color);
  }
  for (const auto& m : c.markers) {
    if (!std::isfinite(m.x) || !std::isfinite(m.y) || m.label.empty()) continue;
    const double x = sx(m.x), y = sy(m.y), w = text_width(m.label, 12);
    bool end = m.label_below_left;
    if (end && x - 11 - w < 0) end = false;
    if (!end && x + 11 + w > W) end = true;
    const double ty = m.label_below_left ? y + 20 : y - 11;
    s.text(end ? x - 11 : x + 11, ty, m.label,
           std::string("text-anchor=\"") + (end ? "end" : "start") +
               "\" font-size=\"12\" font-weight=\"bold\" fill=\"" + m.color +
               "\" style=\"paint-order:stroke;stroke:#fff;stroke-width:3px\"");
  }
  s.rect(left, top, pw, ph, "fill:none;stroke:#444;stroke-width:1");
  return s.close();
}

std::string phase_bar(const std::vector<Part>& parts, double width) {
  std::vector<Part> shown;
  double total = 0;
  for (const auto& p : parts) {
    if (std::isfinite(p.seconds) && p.seconds > 0) shown.push_back(p), total += p.seconds;
  }
  // Legend first: its rows set the height.
  const double left = 10, bw = width - 20;
  std::vector<std::string> labels;
  std::vector<std::pair<double, double>> at;
  double lx = left, ly = 58;
  for (const auto& p : shown) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100 * p.seconds / total);
    labels.push_back(p.label + " " + common::format_seconds(p.seconds) + " (" + share + ")");
    const double iw = 16 + text_width(labels.back()) + 20;
    if (lx > left && lx + iw > width) lx = left, ly += 18;
    at.push_back({lx, ly});
    lx += iw;
  }
  const double H = ly + 12;
  Svg s;
  s.open(width, H, "Where the time went");
  s.rect(0, 0, width, H, "fill:#fff");
  if (shown.empty()) {
    s.text(width / 2, 30, "no phase was timed", "text-anchor=\"middle\" font-size=\"13\" fill=\"#777\"");
    return s.close();
  }
  double x = left;
  for (size_t i = 0; i < shown.size(); ++i) {
    const double w = shown[i].seconds / total * bw;
    s.rect(x, 8, w, 28, "fill:" + shown[i].color + ";stroke:#fff;stroke-width:1");
    x += w;
    s.rect(at[i].first, at[i].second - 9, 11, 11, "fill:" + shown[i].color);
    s.text(at[i].first + 16, at[i].second, labels[i], "font-size=\"11\" fill=\"#333\"");
  }
  return s.close();
}

}  // namespace tula::tune::charts
