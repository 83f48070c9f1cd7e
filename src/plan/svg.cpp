#include "plan/svg.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>
#include <sstream>

#include "common/text.hpp"

namespace tula::plan {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << v;
  return o.str();
}

// A log-scaled axis from data range [lo, hi] onto pixels [p0, p1].
struct LogAxis {
  double lo = 1, hi = 10, p0 = 0, p1 = 1;
  static LogAxis fit(double lo, double hi, double p0, double p1) {
    lo = std::max(lo, 1e-12);
    hi = std::max(hi, lo * 1.0001);
    const double pad = 0.04 * (std::log10(hi) - std::log10(lo)) + 0.02;  // breathing room at both ends
    return {std::log10(lo) - pad, std::log10(hi) + pad, p0, p1};
  }
  double operator()(double v) const {
    return p0 + (std::log10(std::max(v, 1e-12)) - lo) / (hi - lo) * (p1 - p0);
  }
  // Ticks from a list of round values (e.g. 1 min, 1 h for time), thinned to at most ~7.
  std::vector<double> ticks_from(const std::vector<double>& round) const {
    std::vector<double> in;
    for (double v : round) {
      if (std::log10(v) >= lo && std::log10(v) <= hi) in.push_back(v);
    }
    const size_t step = in.size() > 7 ? (in.size() + 6) / 7 : 1;
    std::vector<double> out;
    for (size_t i = 0; i < in.size(); i += step) out.push_back(in[i]);
    return out;
  }
  // 1-2-5 ticks per decade, thinned to at most ~7.
  std::vector<double> ticks() const {
    for (const auto& mantissas : {std::vector<double>{1, 2, 5}, std::vector<double>{1, 3}, std::vector<double>{1}}) {
      std::vector<double> t;
      for (int e = static_cast<int>(std::floor(lo)); e <= static_cast<int>(std::ceil(hi)); ++e) {
        for (double m : mantissas) {
          const double v = m * std::pow(10.0, e);
          if (std::log10(v) >= lo && std::log10(v) <= hi) t.push_back(v);
        }
      }
      if (t.size() <= 7) return t;
    }
    return {};
  }
};

struct Svg {
  std::ostringstream o;
  void line(double x1, double y1, double x2, double y2, const std::string& style) {
    o << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2)
      << "\" style=\"" << style << "\"/>\n";
  }
  void circle(double x, double y, double r, const std::string& style) {
    o << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\" style=\"" << style << "\"/>\n";
  }
  void diamond(double x, double y, double r, const std::string& style) {
    o << "<polygon points=\"" << num(x) << "," << num(y - r) << " " << num(x + r) << "," << num(y) << " " << num(x)
      << "," << num(y + r) << " " << num(x - r) << "," << num(y) << "\" style=\"" << style << "\"/>\n";
  }
  void text(double x, double y, const std::string& s, const std::string& attrs = "") {
    o << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" " << attrs << ">" << escape(s) << "</text>\n";
  }
  void polyline(const std::vector<std::pair<double, double>>& pts, const std::string& style) {
    if (pts.size() < 2) return;
    o << "<polyline points=\"";
    for (const auto& [x, y] : pts) o << num(x) << "," << num(y) << " ";
    o << "\" style=\"fill:none;" << style << "\"/>\n";
  }
};

struct Panel {
  double x0, y0, w, h;  // plot area
  LogAxis ax, ay;
};

// Round times a reader knows: seconds, minutes, hours, days.
const std::vector<double>& time_ticks() {
  static const std::vector<double> t = {1e-3, 1e-2, 0.1, 1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400};
  return t;
}

enum class AxisKind { PowersOfTwo, Time, Plain };

void draw_axes(Svg& s, const Panel& p, const std::string& title, const std::string& xlabel, const std::string& ylabel,
               AxisKind xkind, AxisKind ykind, const std::function<std::string(double)>& xfmt,
               const std::function<std::string(double)>& yfmt) {
  s.o << "<rect x=\"" << num(p.x0) << "\" y=\"" << num(p.y0) << "\" width=\"" << num(p.w) << "\" height=\"" << num(p.h)
      << "\" style=\"fill:#fff;stroke:#444;stroke-width:1\"/>\n";
  std::vector<double> xt;
  if (xkind == AxisKind::PowersOfTwo) {
    std::vector<double> all;
    for (double v = 1; v <= std::pow(10.0, p.ax.hi); v *= 2) {
      if (std::log10(v) >= p.ax.lo) all.push_back(v);
    }
    const size_t step = all.size() > 9 ? (all.size() + 8) / 9 : 1;
    for (size_t i = 0; i < all.size(); i += step) xt.push_back(all[i]);
  } else {
    xt = xkind == AxisKind::Time ? p.ax.ticks_from(time_ticks()) : p.ax.ticks();
  }
  for (double v : xt) {
    const double x = p.ax(v);
    s.line(x, p.y0, x, p.y0 + p.h, "stroke:#e6e6e6;stroke-width:1");
    s.text(x, p.y0 + p.h + 15, xfmt(v), "text-anchor=\"middle\" font-size=\"11\"");
  }
  for (double v : ykind == AxisKind::Time ? p.ay.ticks_from(time_ticks()) : p.ay.ticks()) {
    const double y = p.ay(v);
    s.line(p.x0, y, p.x0 + p.w, y, "stroke:#e6e6e6;stroke-width:1");
    s.text(p.x0 - 5, y + 4, yfmt(v), "text-anchor=\"end\" font-size=\"11\"");
  }
  s.text(p.x0 + p.w / 2, p.y0 - 10, title, "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  s.text(p.x0 + p.w / 2, p.y0 + p.h + 34, xlabel, "text-anchor=\"middle\" font-size=\"12\"");
  const double yl = p.x0 - 58, ym = p.y0 + p.h / 2;
  s.text(yl, ym, ylabel,
         "text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 " + num(yl) + " " + num(ym) + ")\"");
}

}  // namespace

std::string render_svg(const Plan& plan) {
  if (plan.candidates.empty() || plan.front.empty()) throw std::invalid_argument("svg: empty plan");
  const double W = 1320, H = 500;
  Svg s;
  s.o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
      << " " << H << "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" style=\"fill:#fff\"/>\n";
  const std::string what = plan.to_target
                               ? "time to " + common::format_number(100 * plan.target_accuracy, 3) + "% test accuracy"
                               : "time for " + common::format_number(plan.epochs, 3) + " epoch(s)";
  s.text(24, 28, plan.model + " on " + plan.dataset + ": " + what + " and cost; objective: " + describe(plan.objective),
         "font-size=\"16\" font-weight=\"bold\"");

  double bmin = 1e300, bmax = 0, tmin = 1e300, tmax = 0, cmin = 1e300, cmax = 0;
  for (const auto& c : plan.candidates) {
    bmin = std::min(bmin, static_cast<double>(c.global_batch));
    bmax = std::max(bmax, static_cast<double>(c.global_batch));
    tmin = std::min(tmin, c.time_s), tmax = std::max(tmax, c.time_s);
    if (c.cost > 0) cmin = std::min(cmin, c.cost), cmax = std::max(cmax, c.cost);
  }
  if (cmax <= 0) cmin = 0.01, cmax = 1;
  const double top = 80, ph = 330, pw = 330;
  Panel pt{90, top, pw, ph, LogAxis::fit(bmin, bmax, 90, 90 + pw), LogAxis::fit(tmin, tmax, top + ph, top)};
  Panel pc{520, top, pw, ph, LogAxis::fit(bmin, bmax, 520, 520 + pw), LogAxis::fit(cmin, cmax, top + ph, top)};
  Panel pf{950, top, pw, ph, LogAxis::fit(tmin, tmax, 950, 950 + pw), LogAxis::fit(cmin, cmax, top + ph, top)};
  auto sec = [](double v) { return common::format_seconds(v); };
  auto money = [](double v) { return common::format_money(v); };
  auto batch = [](double v) {
    const auto b = static_cast<int64_t>(v);
    return b >= 1024 && b % 1024 == 0 ? std::to_string(b / 1024) + "k" : std::to_string(b);
  };
  draw_axes(s, pt, "Time vs global batch", "global batch (samples per step)", "time", AxisKind::PowersOfTwo,
            AxisKind::Time, batch, sec);
  draw_axes(s, pc, "Cost vs global batch", "global batch (samples per step)", "cost", AxisKind::PowersOfTwo,
            AxisKind::Plain, batch, money);
  draw_axes(s, pf, "Pareto front: cost vs time", "time", "cost", AxisKind::Time, AxisKind::Plain, sec, money);

  // Every configuration, thinned to a few thousand dots so the file stays small.
  const size_t stride = std::max<size_t>(1, plan.candidates.size() / 3000);
  const std::string faint = "fill:#9a9a9a;fill-opacity:0.35;stroke:none";
  for (size_t i = 0; i < plan.candidates.size(); i += stride) {
    const auto& c = plan.candidates[i];
    const double b = static_cast<double>(c.global_batch);
    s.circle(pt.ax(b), pt.ay(c.time_s), 1.8, faint);
    s.circle(pc.ax(b), pc.ay(c.cost), 1.8, faint);
    s.circle(pf.ax(c.time_s), pf.ay(c.cost), 1.8, faint);
  }
  // Best at each global batch, drawn through the powers of two only: other
  // batches (a memory limit of 657, say) are reached by few configurations
  // and would make the line zigzag.
  std::map<int64_t, std::pair<double, double>> env;
  for (const auto& c : plan.candidates) {
    if ((c.global_batch & (c.global_batch - 1)) != 0) continue;
    auto [it, fresh] = env.try_emplace(c.global_batch, c.time_s, c.cost);
    if (!fresh) it->second = {std::min(it->second.first, c.time_s), std::min(it->second.second, c.cost)};
  }
  std::vector<std::pair<double, double>> lt, lc;
  for (const auto& [b, tc] : env) {
    lt.push_back({pt.ax(static_cast<double>(b)), pt.ay(tc.first)});
    lc.push_back({pc.ax(static_cast<double>(b)), pc.ay(tc.second)});
  }
  s.polyline(lt, "stroke:#555;stroke-width:1.5;stroke-dasharray:4,3");
  s.polyline(lc, "stroke:#555;stroke-width:1.5;stroke-dasharray:4,3");

  // The front.
  const std::string blue = "fill:#1f77b4;stroke:#fff;stroke-width:0.8";
  std::vector<std::pair<double, double>> lf;
  for (size_t i = 0; i < plan.front.size(); ++i) {
    const auto& c = plan.candidates[plan.front[i]];
    const double b = static_cast<double>(c.global_batch);
    s.circle(pt.ax(b), pt.ay(c.time_s), 3.5, blue);
    s.circle(pc.ax(b), pc.ay(c.cost), 3.5, blue);
    lf.push_back({pf.ax(c.time_s), pf.ay(c.cost)});
  }
  s.polyline(lf, "stroke:#1f77b4;stroke-width:2");
  for (size_t i = 0; i < plan.front.size(); ++i) {
    const auto& c = plan.candidates[plan.front[i]];
    if (i < plan.front_time.size()) {  // the interval of each front point, as a cross
      s.line(pf.ax(plan.front_time[i].lo), pf.ay(c.cost), pf.ax(plan.front_time[i].hi), pf.ay(c.cost),
             "stroke:#1f77b4;stroke-opacity:0.35;stroke-width:1");
      s.line(pf.ax(c.time_s), pf.ay(plan.front_cost[i].lo), pf.ax(c.time_s), pf.ay(plan.front_cost[i].hi),
             "stroke:#1f77b4;stroke-opacity:0.35;stroke-width:1");
    }
    s.circle(pf.ax(c.time_s), pf.ay(c.cost), 3.5, blue);
  }

  // Knee and choice.
  const std::string red = "fill:none;stroke:#d62728;stroke-width:2.5";
  const auto& k = plan.candidates[plan.knee];
  const auto& ch = plan.chosen_candidate();
  const double kb = static_cast<double>(k.global_batch), cb = static_cast<double>(ch.global_batch);
  const std::string knee_label = plan.knee == plan.chosen ? "knee (chosen)" : "knee";
  for (const auto& [panel, x, y] : {std::tuple{&pt, pt.ax(kb), pt.ay(k.time_s)}, std::tuple{&pc, pc.ax(kb), pc.ay(k.cost)},
                                    std::tuple{&pf, pf.ax(k.time_s), pf.ay(k.cost)}}) {
    (void)panel;
    s.circle(x, y, 9, red);
    s.text(x + 12, y - 10, knee_label, "font-size=\"12\" fill=\"#d62728\" font-weight=\"bold\"");
  }
  if (plan.knee != plan.chosen) {
    const std::string black = "fill:#111;stroke:#fff;stroke-width:1";
    const std::string label = "chosen";
    for (const auto& [x, y] : {std::pair{pt.ax(cb), pt.ay(ch.time_s)}, std::pair{pc.ax(cb), pc.ay(ch.cost)},
                               std::pair{pf.ax(ch.time_s), pf.ay(ch.cost)}}) {
      s.diamond(x, y, 7, black);
      // Left and below, where the knee's label (right and above) is not.
      s.text(x - 9, y + 17, label, "text-anchor=\"end\" font-size=\"12\" fill=\"#111\" font-weight=\"bold\"");
    }
  }

  // Legend and the one-line reading of the choice.
  const double ly = H - 32;
  s.circle(100, ly - 4, 2.5, "fill:#9a9a9a");
  s.text(108, ly, "a configuration", "font-size=\"12\"");
  s.line(215, ly - 4, 245, ly - 4, "stroke:#555;stroke-width:1.5;stroke-dasharray:4,3");
  s.text(250, ly, "best at each global batch", "font-size=\"12\"");
  s.circle(420, ly - 4, 4, blue);
  s.text(428, ly, "Pareto front (time, cost; crosses: intervals)", "font-size=\"12\"");
  s.circle(720, ly - 4, 7, red);
  s.text(732, ly, "knee (Kneedle)", "font-size=\"12\"");
  s.diamond(840, ly - 4, 6, "fill:#111");
  s.text(852, ly, "chosen (" + describe(plan.objective) + ")", "font-size=\"12\"");
  const auto& cfg = ch.config;
  std::ostringstream pick;
  pick << "Chosen: " << cfg.nodes << " x " << plan.machines[ch.machine].spec.name << ", " << cfg.workers_per_node
       << " worker(s)/node, batch " << cfg.batch_per_worker << (cfg.accumulation_steps > 1 ? " x " + std::to_string(cfg.accumulation_steps) : "")
       << " (global " << ch.global_batch << "): " << common::format_seconds(ch.time_s) << ", "
       << common::format_money(ch.cost) << "; limited by " << plan.limit;
  s.text(100, H - 10, pick.str(), "font-size=\"12\" fill=\"#333\"");
  s.o << "</svg>\n";
  return s.o.str();
}

}  // namespace tula::plan
