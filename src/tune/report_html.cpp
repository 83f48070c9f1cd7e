#include "tune/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <set>

#include "common/text.hpp"
#include "render/chart.hpp"
#include "render/escape.hpp"
#include "render/html.hpp"
#include "render/phase_bar.hpp"
#include "tune/report_fields.hpp"

namespace tula::tune {

namespace {

using render::escape;
using nlohmann::json;
using Points = std::vector<std::pair<double, double>>;
namespace f = fields;
namespace html = render::html;

const char* const kPredicted = "#1f77b4";
const char* const kMeasured = "#2ca02c";
const char* const kTarget = "#d62728";
const char* const kPlan = "#7f7f7f";
const char* const kResize = "#ff7f0e";

const char* const kCss = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;background:#eef0f3;color:#222;line-height:1.45}
main{max-width:1000px;margin:0 auto;padding:20px 32px 40px;background:#fff}
h1{font-size:1.55em;margin:.2em 0 .3em}
h2{font-size:1.25em;border-bottom:2px solid #e3e6ea;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.05em;margin:1.4em 0 .4em}
nav{font-size:.9em;color:#555}
nav a{color:#1f5f99;margin-right:.9em;text-decoration:none}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border-bottom:1px solid #e3e6ea;padding:.28em .7em;text-align:left;vertical-align:top}
thead th{background:#f4f5f7}
table.facts th{background:none;font-weight:600;color:#555;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.mark{font-weight:600;color:#b02020}
td.yes{font-weight:600}
tr.chosen td{background:#fff6e0}
tr.skipped td{color:#777}
.badge{display:inline-block;padding:.1em .6em;border-radius:.8em;font-weight:600;font-size:.9em;margin-right:.5em}
.state-succeeded{background:#ddf2dd;color:#17621a}
.state-stopped{background:#fbeccc;color:#7a5200}
.state-failed{background:#f9dcdc;color:#8c1515}
.state-running{background:#dbe8f7;color:#1f4f80}
.state-unknown{background:#e8e8e8;color:#444}
.missing{color:#777;font-style:italic}
.good{color:#17621a}
.bad{color:#8c1515}
figure{margin:1.2em 0}
figcaption{font-size:.88em;color:#555;max-width:680px}
svg{max-width:100%;height:auto;display:block}
p.explanation{max-width:760px}
footer{margin-top:3em;font-size:.85em;color:#777}
@media print{body{background:#fff}main{padding:0}nav{display:none}}
)";

// ---- reading the report ------------------------------------------------------

std::optional<double> estimate(const json& v) {
  if (v.is_object()) return f::number(v, "estimate");
  return f::number(v);
}

Points points(const json& rows, const std::string& xkey, const std::string& ykey) {
  Points out;
  if (!rows.is_array()) return out;
  for (const auto& row : rows) {
    const auto x = f::number(row, xkey), y = f::number(row, ykey);
    if (x && y) out.push_back({*x, *y});
  }
  return out;
}

std::string plural(double n, const std::string& one, const std::string& many) {
  return common::format_number(n, 6) + " " + (n == 1 ? one : many);
}

// "2 x cpu.small, 4 workers per node, batch 64 per worker x 2 accumulation steps (global batch 512)".
std::string config_text(const json& c) {
  if (!c.is_object()) return "none";
  const auto nodes = f::number(c, "nodes"), wpn = f::number(c, "workers_per_node");
  const auto b = f::number(c, "batch_per_worker"), acc = f::number(c, "accumulation_steps");
  const auto gb = f::number(c, "global_batch");
  std::string s = (nodes ? common::format_number(*nodes, 6) + " x " : "") + f::text(c, "machine", "unknown machine");
  if (wpn) s += ", " + plural(*wpn, "worker", "workers") + " per node";
  if (b) s += ", batch " + common::format_number(*b, 8) + " per worker";
  if (acc && *acc > 1) s += " x " + common::format_number(*acc, 6) + " accumulation steps";
  if (gb) s += " (global batch " + common::format_number(*gb, 10) + ")";
  return s;
}

// "8 x cpu.small x 4 workers, batch 16 (global 512)", for tables.
std::string config_compact(const json& c) {
  if (!c.is_object()) return "none";
  std::string s = f::text(c, "machine", "?");
  if (const auto nodes = f::number(c, "nodes")) s = common::format_number(*nodes, 6) + " x " + s;
  if (const auto wpn = f::number(c, "workers_per_node")) s += " x " + plural(*wpn, "worker", "workers");
  if (const auto b = f::number(c, "batch_per_worker")) s += ", batch " + common::format_number(*b, 8);
  if (const auto acc = f::number(c, "accumulation_steps"); acc && *acc > 1) {
    s += " x " + common::format_number(*acc, 6) + " accumulated";
  }
  if (const auto gb = f::number(c, "global_batch")) s += " (global " + common::format_number(*gb, 10) + ")";
  return s;
}

// "B=512, 8 workers", for chart labels.
std::string config_short(const json& c) {
  if (!c.is_object()) return "?";
  std::string s;
  if (const auto gb = f::number(c, "global_batch")) s = "B=" + common::format_number(*gb, 10);
  const double nodes = f::number(c, "nodes").value_or(1);
  const auto wpn = f::number(c, "workers_per_node");
  if (wpn) s += (s.empty() ? "" : ", ") + plural(nodes * *wpn, "worker", "workers");
  return s.empty() ? "?" : s;
}

std::string missing(const std::string& what) { return "<p class=\"missing\">" + escape(what) + "</p>\n"; }
std::string para(const std::string& text, const std::string& cls = "") {
  return "<p" + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">" + escape(text) + "</p>\n";
}
std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>\n" + svg + "<figcaption>" + escape(caption) + "</figcaption>\n</figure>\n";
}

// (predicted - measured) / measured, as in remaining_error.
std::optional<double> relative_error(std::optional<double> predicted, std::optional<double> measured) {
  if (!predicted || !measured || *measured == 0) return std::nullopt;
  return (*predicted - *measured) / *measured;
}

// What every section reads.
struct Ctx {
  const json& r;
  std::string currency = "USD";
  std::optional<double> measured_total{};
  bool finished = false;                // succeeded: the measured total is the job's real end
  std::vector<render::Rule> resizes{};  // applied re-plans, for every timeline chart
  std::vector<render::Band> bands{};    // when no training ran
};

render::Axis elapsed_axis() {
  render::Axis a{"elapsed time since the job started", render::Unit::Seconds};
  a.scale = render::ScaleKind::Linear;
  a.from_zero = true;
  return a;
}

// ---- (1) the job ---------------------------------------------------------------

std::string header(const Ctx& c) {
  const json& job = f::object(c.r, "job");
  std::string state = f::text(c.r, "state", "unknown");
  const std::set<std::string> known = {"succeeded", "stopped", "failed", "running"};
  const std::string state_class = known.count(state) ? state : "unknown";
  std::string o = "<p><span class=\"badge state-" + state_class + "\">" + escape(state) + "</span>" +
                  escape(f::text(c.r, "reason", "no reason was recorded")) + "</p>\n";

  std::string objective = f::text(job, "objective_text", "");
  if (const auto code = f::string(job, "objective")) {
    objective = objective.empty() ? *code : objective + " (" + *code + ")";
  }
  std::string target = "none";
  if (const auto acc = f::number(job, "target_accuracy")) {
    target = html::percent(*acc) + " test accuracy";
  } else if (const auto ep = f::number(job, "epochs")) {
    target = plural(*ep, "epoch", "epochs");
  }
  const json& price = f::object(c.r, "price");
  std::string price_text = "none";
  if (const auto per_hour = f::number(price, "per_hour")) {
    price_text = html::money(*per_hour, c.currency) + " per hour";
    if (const auto basis = f::string(price, "basis")) price_text += " (" + *basis + ")";
  }
  html::Table facts({}, "facts");
  auto fact = [&](const std::string& k, const std::string& v) {
    facts.row({html::raw("<strong>" + escape(k) + "</strong>"), html::text(v)});
  };
  fact("Objective", objective.empty() ? "none" : objective);
  fact("Target", target);
  fact("Resources", f::text(job, "resources", "none"));
  fact("Backend", f::text(job, "backend", "none"));
  fact("Optimizer", f::text(job, "optimizer", "none"));
  fact("Price", price_text);
  fact("Started", f::text(job, "started", "not recorded"));
  fact("Finished", f::text(job, "finished", state == "running" ? "not yet" : "not recorded"));
  fact("Job directory", f::text(job, "out_dir", "not recorded"));
  return o + facts.str();
}

// ---- (2) the bill --------------------------------------------------------------

std::string bill(const Ctx& c) {
  const json& pred = f::object(c.r, "predicted");
  const json& meas = f::object(c.r, "measured");
  const json& plan_chosen = f::object(f::object(c.r, "plan"), "chosen");
  // The plan's interval for the chosen configuration, as "lo to hi".
  auto interval = [&](const std::string& key, const std::function<std::string(double)>& fmt) {
    const json& i = f::object(plan_chosen, key);
    const auto lo = f::number(i, "lo"), hi = f::number(i, "hi");
    return lo && hi ? fmt(*lo) + " to " + fmt(*hi) : std::string("none");
  };
  const auto secs = [](double v) { return html::seconds(v); };
  const auto cash = [&](double v) { return html::money(v, c.currency); };
  const auto count = [](double v) { return html::number(v, 4); };
  auto err_cell = [](std::optional<double> e) {
    if (!e) return html::num("not measured");
    return html::Cell{escape(html::signed_percent(e)), std::abs(*e) <= 0.1 ? "num good" : "num bad"};
  };

  html::Table t({"", "predicted", "measured", "error", "plan's interval"});
  const auto pt = f::number(pred, "time_s"), mt = f::number(meas, "time_s");
  const auto pc = f::number(pred, "cost"), mc = f::number(meas, "cost");
  t.row({html::text("Total time"), html::num(html::seconds(pt, "none")), html::num(html::seconds(mt)),
         err_cell(relative_error(pt, mt)), html::text(interval("time_s", secs))});
  t.row({html::text("Cost"), html::num(html::money(pc, c.currency, "none")), html::num(html::money(mc, c.currency)),
         err_cell(relative_error(pc, mc)), html::text(interval("cost", cash))});
  const auto steps_p = estimate(f::at(plan_chosen, "steps")), steps_m = f::number(meas, "steps");
  const auto ep_p = estimate(f::at(plan_chosen, "epochs")), ep_m = f::number(meas, "epochs");
  t.row({html::text("Steps"), html::num(html::number(steps_p, 4, "none")), html::num(html::number(steps_m, 8)),
         err_cell(relative_error(steps_p, steps_m)), html::text(interval("steps", count))});
  t.row({html::text("Epochs"), html::num(html::number(ep_p, 3, "none")), html::num(html::number(ep_m, 3)),
         err_cell(relative_error(ep_p, ep_m)), html::text(interval("epochs", count))});
  const auto target = f::number(f::object(c.r, "job"), "target_accuracy");
  const auto acc = f::number(meas, "final_accuracy");
  html::Cell verdict = html::num("not measured");
  if (acc && target) {
    verdict = *acc >= *target
                  ? html::Cell{"target reached", "num good"}
                  : html::Cell{escape(common::format_number(100 * (*target - *acc), 3) + " points short"), "num bad"};
  } else if (acc) {
    verdict = html::num("no target");
  }
  t.row({html::text("Final test accuracy"), html::num(target ? "target " + html::percent(target) : "no target"),
         html::num(html::percent(acc)), verdict, html::text("")});

  std::string o = t.str();
  std::string at = f::text(pred, "at", "");
  o += para("Errors are (predicted - measured) / measured: a negative error means the prediction was optimistic." +
                (at.empty() ? std::string() : " The prediction is the one made at: " + at + ".") +
                (c.finished ? "" : " The job did not succeed, so the measured numbers cover only what ran."),
            "note");

  // Phases.
  const json& ph = f::object(c.r, "phases");
  o += "<h3>Phases</h3>\n";
  if (!ph.is_object()) return o + missing("No phase was timed.");
  const auto profile = f::number(ph, "profile_s"), pilot = f::number(ph, "pilot_s"), train = f::number(ph, "train_s"),
             restart = f::number(ph, "restart_s"), total = f::number(ph, "total_s");
  auto share = f::number(ph, "profiling_share");
  if (!share && total && *total > 0 && (profile || pilot)) share = (profile.value_or(0) + pilot.value_or(0)) / *total;
  html::Table p({"phase", "time", "share of the job"});
  auto row = [&](const std::string& name, std::optional<double> v) {
    p.row({html::text(name), html::num(html::seconds(v)),
           html::num(v && total && *total > 0 ? html::percent(*v / *total, 3) : "")});
  };
  row("profile", profile);
  row("pilot runs", pilot);
  row("training", train);
  row("restarts (re-plans)", restart);
  row("total", total);
  p.row({html::text("profiling share (profile and pilots)"), html::num(html::percent(share, 3)), html::text("")});
  o += p.str();
  std::vector<render::Part> parts = {{"profile", profile.value_or(0), "#8c564b"},
                                     {"pilot", pilot.value_or(0), "#e377c2"},
                                     {"training", train.value_or(0), kPredicted},
                                     {"restarts", restart.value_or(0), kResize}};
  if (total) {
    const double other = *total - profile.value_or(0) - pilot.value_or(0) - train.value_or(0) - restart.value_or(0);
    if (other > 0.005 * *total) parts.push_back({"other (planning, start-up)", other, "#bbbbbb"});
  }
  return o + render::phase_bar_svg(parts);
}

// ---- (3) the choice ------------------------------------------------------------

std::optional<std::pair<double, double>> time_cost(const json& row) {
  const auto t = estimate(f::at(row, "time_s")), c = estimate(f::at(row, "cost"));
  if (!t || !c) return std::nullopt;
  return std::pair{*t, *c};
}

bool has_mark(const json& row, const std::string& mark) {
  for (const auto& m : f::array(row, "marks")) {
    if (m.is_string() && m.get<std::string>() == mark) return true;
  }
  return false;
}

std::string pareto_chart(const Ctx& c, const json& plan) {
  render::Chart ch;
  ch.title = "The time/cost front the plan chose from";
  const auto epochs = f::number(plan, "epochs");
  ch.x = {f::boolean(plan, "to_target").value_or(true) || !epochs
              ? "predicted time to the target"
              : "predicted time for " + plural(*epochs, "epoch", "epochs"),
          render::Unit::Seconds};
  ch.y = {"predicted cost", render::Unit::Money, c.currency};
  ch.empty_text = "the plan lists no configuration";
  // Every evaluated configuration, where the plan carries them.
  render::Series cloud{"a configuration the planner evaluated", {}, "#8a8a8a", render::Style::Faint};
  const json& cand = f::at(plan, "candidates");
  for (const auto& row : f::array(cand, "rows")) {
    if (row.is_array() && row.size() >= 2) {
      const auto t = f::number(row[0]), k = f::number(row[1]);
      if (t && k) cloud.points.push_back({*t, *k});
    }
  }
  render::Series front{"Pareto front", {}, kPredicted, render::Style::LineDots};
  std::optional<std::pair<double, double>> chosen;
  for (const auto& row : f::array(plan, "front")) {
    if (const auto tc = time_cost(row)) {
      front.points.push_back(*tc);
      if (has_mark(row, "chosen")) chosen = tc;
    }
  }
  if (!chosen) chosen = time_cost(f::object(plan, "chosen"));
  const auto knee = time_cost(f::object(plan, "knee"));
  if (!cloud.points.empty()) ch.series.push_back(cloud);
  ch.series.push_back(front);
  const bool same = knee && chosen && std::abs(knee->first - chosen->first) <= 1e-9 * std::abs(knee->first) &&
                    std::abs(knee->second - chosen->second) <= 1e-9 * std::abs(knee->second);
  if (knee)
    ch.markers.push_back({knee->first, knee->second, render::Shape::Ring, same ? "knee (chosen)" : "knee", kTarget});
  if (chosen && !same) {
    ch.markers.push_back({chosen->first, chosen->second, render::Shape::Diamond, "chosen", "#111111", true});
  }
  const auto mt = f::number(f::object(c.r, "measured"), "time_s"), mc = f::number(f::object(c.r, "measured"), "cost");
  if (mt && mc && c.finished) {
    ch.markers.push_back({*mt, *mc, render::Shape::Star, "measured", kMeasured, true});
  }
  std::string caption = "Faint dots: every configuration the planner evaluated";
  if (cloud.points.empty()) caption = "The plan did not carry its evaluated configurations, so only the front is drawn";
  caption += "; blue: the Pareto front (no configuration is both faster and cheaper); red ring: the knee";
  if (chosen && !same) caption += "; black diamond: the configuration the objective chose";
  if (mt && mc && c.finished) caption += "; green star: what the job measured";
  return figure(render::chart_svg(ch), caption + ".");
}

std::string front_table(const Ctx& c, const json& plan) {
  const json& front = f::array(plan, "front");
  if (front.empty()) return "";
  std::set<size_t> rows;
  const size_t n = front.size(), want = 12;
  for (size_t i = 0; i < std::min(n, want); ++i) rows.insert(n <= want ? i : i * (n - 1) / (want - 1));
  for (size_t i = 0; i < n; ++i) {
    if (!f::array(front[i], "marks").empty()) rows.insert(i);
  }
  html::Table t(
      {"#", "machine", "nodes", "workers/node", "batch", "accum.", "global", "iteration", "time", "cost", ""});
  for (size_t i : rows) {
    const json& r = front[i];
    std::string marks;
    for (const auto& m : f::array(r, "marks")) {
      if (m.is_string()) marks += (marks.empty() ? "" : ", ") + m.get<std::string>();
    }
    auto n6 = [&](const std::string& k) { return html::num(html::number(f::number(r, k), 8, "")); };
    t.row({html::num(std::to_string(i + 1)), html::text(f::text(r, "machine", "")), n6("nodes"), n6("workers_per_node"),
           n6("batch_per_worker"), n6("accumulation_steps"), n6("global_batch"),
           html::num(html::seconds(f::number(r, "iteration_s"), "")),
           html::num(html::seconds(f::number(r, "time_s"), "")),
           html::num(html::money(f::number(r, "cost"), c.currency, "")), html::text(marks, "mark")},
          has_mark(r, "chosen") ? "chosen" : "");
  }
  std::string o = "<h3>The front</h3>\n" + t.str();
  if (rows.size() < n)
    o += para(std::to_string(n - rows.size()) + " more configurations on the front are in report.json.", "note");
  return o;
}

std::string choice(const Ctx& c) {
  const json& plan = f::object(c.r, "plan");
  std::string o;
  const json& started = f::object(c.r, "chosen");
  o += "<p><strong>Started with:</strong> " + escape(config_text(started)) + "</p>\n";
  if (!plan.is_object()) {
    return o + missing("No plan: the job ended before planning finished, so there is no front to show.");
  }
  std::string summary;
  if (const auto e = f::number(plan, "enumerated"))
    summary += common::format_number(*e, 10) + " configurations enumerated";
  if (const auto fe = f::number(plan, "feasible")) {
    summary += (summary.empty() ? "" : ", ") + common::format_number(*fe, 10) + " feasible";
  }
  summary += (summary.empty() ? "" : ", ") + std::to_string(f::array(plan, "front").size()) + " on the time/cost front";
  if (const auto s = f::number(plan, "planning_seconds")) summary += "; planned in " + common::format_seconds(*s);
  o += para(summary + ".");
  o += pareto_chart(c, plan);
  if (const auto limit = f::string(plan, "limit"))
    o += para("What limits the chosen configuration most: " + *limit + ".");
  o += "<h3>Why this configuration</h3>\n";
  o += para(f::text(plan, "explanation", "The plan gives no explanation."), "explanation");
  const json& sens = f::object(plan, "knee_sensitivity");
  if (const auto st = f::string(sens, "statement")) o += para("Knee: " + *st, "explanation");
  if (f::boolean(plan, "knee_detected") == false) {
    o += para("Kneedle found no knee on this front; the point farthest below the chord was used.", "note");
  }
  o += front_table(c, plan);
  auto list = [&](const std::string& title, const json& items, const std::string& none) {
    std::string s = "<h3>" + escape(title) + "</h3>\n";
    if (items.empty()) return s + missing(none);
    s += "<ul>\n";
    for (const auto& a : items) s += "<li>" + escape(a.is_string() ? a.get<std::string>() : a.dump()) + "</li>\n";
    return s + "</ul>\n";
  };
  o += list("Assumptions", f::array(plan, "assumptions"), "none");
  if (!f::array(plan, "skipped").empty()) o += list("Left out of the plan", f::array(plan, "skipped"), "none");
  return o;
}

// ---- (4) along the run ---------------------------------------------------------

render::Chart timeline_chart(const Ctx& c, const std::string& title, render::Axis y) {
  render::Chart ch;
  ch.title = title;
  ch.x = elapsed_axis();
  ch.y = std::move(y);
  ch.vlines = c.resizes;
  ch.bands = c.bands;
  ch.band_legend = "no training ran (profile, pilots, restarts)";
  return ch;
}

// A series along the run, its line broken where the workers restarted.
render::Series run_series(const Ctx& c, std::string name, Points pts, const char* color,
                          render::Style style = render::Style::LineDots) {
  render::Series s{std::move(name), std::move(pts), color, style};
  for (const auto& b : c.bands) s.breaks.push_back(b.to);
  for (const auto& r : c.resizes) s.breaks.push_back(r.at);
  return s;
}

std::string along_the_run(const Ctx& c) {
  const json& tl = f::array(c.r, "timeline");
  const json& evals = f::array(c.r, "evaluations");
  std::string o;
  const std::string marks = c.resizes.empty() ? "" : " Orange lines: a resize (an applied re-plan).";
  if (tl.empty()) {
    o += missing("No watch point was recorded: the job ended before training reported progress.");
  } else {
    const auto plan_total = f::number(f::object(c.r, "predicted"), "time_s");
    {
      auto ch = timeline_chart(c, "Predicted total time, from each watch point",
                               {"total time of the job", render::Unit::Seconds});
      ch.series.push_back(run_series(c, "predicted total", points(tl, "t_s", "predicted_total_s"), kPredicted));
      if (c.measured_total) {
        ch.hlines.push_back({*c.measured_total,
                             (c.finished ? "measured total " : "time run so far ") + html::seconds(c.measured_total),
                             kMeasured, false});
      }
      if (plan_total) ch.hlines.push_back({*plan_total, "plan's prediction " + html::seconds(plan_total), kPlan, true});
      o += figure(render::chart_svg(ch),
                  "What the job expected its whole run to take, as predicted from each watch point, "
                  "against what it took." +
                      marks);
    }
    {
      auto ch = timeline_chart(c, "Remaining time: predicted and measured", {"remaining time", render::Unit::Seconds});
      ch.series.push_back(run_series(c, "predicted remaining", points(tl, "t_s", "predicted_remaining_s"), kPredicted));
      if (c.finished && c.measured_total) {
        Points m;
        for (const auto& w : tl) {
          if (const auto t = f::number(w, "t_s")) m.push_back({*t, std::max(0.0, *c.measured_total - *t)});
        }
        ch.series.push_back({"measured remaining (the real end minus the time)", m, kMeasured, render::Style::Line});
      }
      o += figure(render::chart_svg(ch),
                  std::string("At each watch point, the remaining time the model predicted") +
                      (c.finished ? " and the remaining time there really was."
                                  : "; the job did not succeed, so the real remaining time is unknown.") +
                      marks);
    }
    {
      auto ch = timeline_chart(c, "Iteration time", {"seconds per step", render::Unit::Seconds});
      ch.series.push_back(run_series(c, "measured", points(tl, "t_s", "iteration_s"), kMeasured));
      ch.series.push_back(
          run_series(c, "predicted", points(tl, "t_s", "iteration_s_predicted"), kPredicted, render::Style::Dashed));
      ch.empty_text = "no iteration time was measured";
      o += figure(render::chart_svg(ch),
                  "Measured seconds per optimizer step against the model's prediction for the "
                  "configuration running at the time." +
                      marks);
    }
  }
  // Accuracy: evaluations, and any accuracy the watch points carry.
  Points acc = points(evals, "t_s", "test_accuracy");
  for (const auto& p : points(tl, "t_s", "test_accuracy")) acc.push_back(p);
  std::sort(acc.begin(), acc.end());
  acc.erase(std::unique(acc.begin(), acc.end()), acc.end());
  const auto target = f::number(f::object(c.r, "job"), "target_accuracy");
  if (!acc.empty()) {
    auto ch = timeline_chart(c, "Test accuracy", {"test accuracy", render::Unit::Percent});
    ch.y.scale = render::ScaleKind::Linear;
    ch.series.push_back({"measured test accuracy", acc, kMeasured, render::Style::LineDots});
    if (target) ch.hlines.push_back({*target, "target " + html::percent(target), kTarget, true});
    o += figure(render::chart_svg(ch),
                "Test accuracy at each evaluation" + std::string(target ? ", against the target." : ".") + marks);
  } else if (!tl.empty()) {
    o += missing("No test accuracy was measured.");
  }
  if (!tl.empty()) {
    const Points noise = points(tl, "t_s", "b_noise");
    if (!noise.empty()) {
      auto ch = timeline_chart(c, "Gradient noise scale", {"samples", render::Unit::Number});
      ch.series.push_back(run_series(c, "noise scale B_noise", noise, "#9467bd"));
      ch.series.push_back({"global batch", points(tl, "t_s", "global_batch"), "#555555", render::Style::Step});
      o += figure(render::chart_svg(ch),
                  "The simple gradient noise scale measured along the run, beside the global "
                  "batch. Batches well below it use the data efficiently; batches far above it "
                  "buy little per extra sample." +
                      marks);
    } else {
      o += missing("The gradient noise scale was not measured.");
    }
  }
  // Segments: one start of the workers each.
  const json& segs = f::array(c.r, "segments");
  if (!segs.empty()) {
    html::Table t({"#", "from", "to", "steps", "configuration", "exit"});
    size_t i = 0;
    for (const auto& s : segs) {
      const auto a = f::number(s, "first_step"), b = f::number(s, "last_step");
      t.row({html::num(std::to_string(++i)), html::num(html::seconds(f::number(s, "start_t_s"), "none")),
             html::num(html::seconds(f::number(s, "end_t_s"), "none")),
             html::num(html::number(a, 10, "?") + " to " + html::number(b, 10, "?")),
             html::text(config_compact(f::object(s, "config"))), html::text(f::text(s, "exit", "none"))});
    }
    o += "<h3>Segments (one start of the workers each)</h3>\n" + t.str();
  }
  return o;
}

// ---- (5) re-plans --------------------------------------------------------------

std::string replans(const Ctx& c) {
  const json& rp = f::array(c.r, "replans");
  if (rp.empty()) {
    const bool ran = !f::array(c.r, "timeline").empty() || !f::array(c.r, "segments").empty();
    return missing(ran ? "none: the plan held for the whole run." : "none: no training ran to re-plan.");
  }
  html::Table t({"time", "step", "from", "to", "reason", "predicted saving", "restart cost", "applied"});
  for (const auto& r : rp) {
    std::string reason = escape(f::text(r, "reason", "no reason recorded"));
    const json& nums = f::object(r, "numbers");
    if (nums.is_object() && !nums.empty()) {
      std::string s;
      for (const auto& [k, v] : nums.items()) {
        s +=
            (s.empty() ? "" : ", ") + k + " " + (v.is_number() ? common::format_number(v.get<double>(), 4) : v.dump());
      }
      reason += "<br/><small>" + escape(s) + "</small>";
    }
    const auto applied = f::boolean(r, "applied");
    t.row({html::num(html::seconds(f::number(r, "t_s"), "none")),
           html::num(html::number(f::number(r, "step"), 10, "none")), html::text(config_compact(f::object(r, "from"))),
           html::text(config_compact(f::object(r, "to"))), html::raw(reason),
           html::num(html::seconds(f::number(r, "predicted_saving_s"), "none")),
           html::num(html::seconds(f::number(r, "restart_cost_s"), "none")),
           html::text(applied ? (*applied ? "applied" : "not applied") : "not recorded",
                      applied.value_or(false) ? "yes" : "")},
          applied.value_or(false) ? "" : "skipped");
  }
  return t.str() +
         para(
             "A re-plan is applied when its predicted saving outweighs the restart it costs; applied ones are "
             "the orange lines on the charts above.",
             "note");
}

// ---- (6) remaining-time error --------------------------------------------------

std::string remaining_error(const Ctx&, const json& rows) {
  if (rows.empty()) {
    return missing("not measured: the job did not run to its end, so the real remaining time is unknown.");
  }
  html::Table t({"point of the run", "elapsed", "predicted remaining", "measured remaining", "error"});
  double sum = 0;
  int n = 0;
  for (const auto& r : rows) {
    const auto e = f::number(r, "error");
    if (e) sum += std::abs(*e), ++n;
    t.row({html::num(html::percent(f::number(r, "fraction"), 3, "?")), html::num(html::seconds(f::number(r, "t_s"))),
           html::num(html::seconds(f::number(r, "predicted_remaining_s"))),
           html::num(html::seconds(f::number(r, "measured_remaining_s"))),
           html::Cell{escape(html::signed_percent(e)), e && std::abs(*e) <= 0.1 ? "num good" : "num bad"}});
  }
  std::string o = t.str();
  if (n)
    o += para("Mean absolute error: " + html::percent(sum / n, 3) + " (error = (predicted - measured) / measured).",
              "note");
  return o;
}

std::string notes(const Ctx& c) {
  const json& ns = f::array(c.r, "notes");
  if (ns.empty()) return missing("none");
  std::string o = "<ul>\n";
  for (const auto& n : ns) o += "<li>" + escape(n.is_string() ? n.get<std::string>() : n.dump()) + "</li>\n";
  return o + "</ul>\n";
}

std::string section(const std::string& id, const std::string& title, const std::function<std::string()>& body) {
  std::string inner;
  try {
    inner = body();
  } catch (const std::exception& e) {
    inner = missing(std::string("This section could not be drawn: ") + e.what());
  }
  return "<section id=\"" + id + "\">\n<h2>" + escape(title) + "</h2>\n" + inner + "</section>\n";
}

}  // namespace

std::string render_report_body(const json& report_in) {
  const json& r = report_in.is_object() ? report_in : f::null_value();
  Ctx c{r};
  c.currency = f::string(f::object(r, "price"), "currency")
                   .value_or(f::string(f::object(r, "plan"), "currency").value_or("USD"));
  c.measured_total = f::number(f::object(r, "measured"), "time_s");
  if (!c.measured_total) c.measured_total = f::number(f::object(r, "phases"), "total_s");
  c.finished = f::text(r, "state", "") == "succeeded";
  for (const auto& rp : f::array(r, "replans")) {
    const auto t = f::number(rp, "t_s");
    if (t && f::boolean(rp, "applied").value_or(false)) {
      c.resizes.push_back({*t, "resize to " + config_short(f::object(rp, "to")), kResize, false});
    }
  }
  const json& ph = f::object(r, "phases");
  const double before = f::number(ph, "profile_s").value_or(0) + f::number(ph, "pilot_s").value_or(0);
  const json& segs = f::array(r, "segments");
  const auto first_start = segs.empty() ? std::nullopt : f::number(segs[0], "start_t_s");
  if (first_start && *first_start > 0) {
    c.bands.push_back({0, *first_start, "profile, pilots, plan"});
  } else if (before > 0) {
    c.bands.push_back({0, before, "profile, pilots"});
  }
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    const auto end = f::number(segs[i], "end_t_s"), next = f::number(segs[i + 1], "start_t_s");
    if (end && next && *next > *end) c.bands.push_back({*end, *next, "restart"});
  }

  const json& job = f::object(r, "job");
  const std::string model = f::text(job, "model", "unknown model"), data = f::text(job, "dataset", "unknown data set");
  std::string o;
  o += "<header>\n<h1>" + escape(model + " on " + data) + "</h1>\n";
  o += "<nav><a href=\"#bill\">The bill</a><a href=\"#choice\">The choice</a><a href=\"#run\">Along the run</a>"
       "<a href=\"#replans\">Re-plans</a><a href=\"#remaining\">Remaining-time error</a><a "
       "href=\"#notes\">Notes</a></nav>\n";
  const auto format = f::string(r, "format");
  const auto version = f::number(r, "version");
  if (format != std::optional<std::string>("tula-tune-report") || version != std::optional<double>(1)) {
    o += missing("This page reads format tula-tune-report version 1; the report says " + format.value_or("no format") +
                 " version " + html::number(version, 4, "none") + ", so parts may be missing.");
  }
  try {
    o += header(c);
  } catch (const std::exception& e) {
    o += missing(std::string("The job's details could not be read: ") + e.what());
  }
  o += "</header>\n";
  o += section("bill", "The bill", [&] { return bill(c); });
  o += section("choice", "The choice", [&] { return choice(c); });
  o += section("run", "Along the run: predicted against measured", [&] { return along_the_run(c); });
  o += section("replans", "Re-plans", [&] { return replans(c); });
  o += section("remaining", "Remaining-time error at 25, 50 and 75% of the run",
               [&] { return remaining_error(c, f::array(r, "remaining_error")); });
  o += section("notes", "Notes", [&] { return notes(c); });
  return o;
}

const char* report_css() { return kCss; }

std::string render_report_html(const json& report_in) {
  const json& r = report_in.is_object() ? report_in : f::null_value();
  const json& job = f::object(r, "job");
  const std::string model = f::text(job, "model", "unknown model"), data = f::text(job, "dataset", "unknown data set");
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
       "<title>" +
       escape("Tula tune report: " + model + " on " + data) +
       "</title>\n"
       "<style>" +
       std::string(kCss) + "</style>\n</head>\n<body>\n<main>\n";
  o += render_report_body(report_in);
  o += "<footer>Written by tula from report.json (format tula-tune-report, version 1). This page needs no network "
       "and no script.</footer>\n</main>\n</body>\n</html>\n";
  return o;
}

}  // namespace tula::tune
