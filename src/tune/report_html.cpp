#include "tune/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "common/text.hpp"
#include "predict/json_fields.hpp"
#include "render/chart.hpp"
#include "render/escape.hpp"
#include "render/html.hpp"
#include "render/phase_bar.hpp"

namespace tula::tune {

namespace {

using common::format_number;
using nlohmann::json;
using records::PlacedConfig;
using records::TuneReport;
using render::escape;
using Points = std::vector<std::pair<double, double>>;
namespace html = render::html;
namespace f = predict::json_fields::forgiving;  // for the plan's part, which stays the planner's own JSON

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

// A plan's number, or the estimate of a plan's interval.
std::optional<double> estimate(const json& v) {
  if (v.is_object()) return f::number(v, "estimate");
  return f::number(v);
}

// (x, y) for each row where both are known and finite.
template <typename Row, typename X, typename Y>
Points points(const std::vector<Row>& rows, X x, Y y) {
  Points out;
  for (const auto& row : rows) {
    const std::optional<double> a = x(row), b = y(row);
    if (a && b && std::isfinite(*a) && std::isfinite(*b)) out.push_back({*a, *b});
  }
  return out;
}

std::string or_else(const std::string& text, const std::string& missing) { return text.empty() ? missing : text; }

std::string plural(double n, const std::string& one, const std::string& many) {
  return format_number(n, 6) + " " + (n == 1 ? one : many);
}

std::string count(int64_t n) { return fmt::format("{}", n); }

// "2 x cpu.small, 4 workers per node, batch 64 per worker x 2 accumulation steps (global batch 512)".
std::string config_text(const std::optional<PlacedConfig>& c) {
  if (!c) return "none";
  const auto& k = c->config;
  std::string s = count(k.nodes) + " x " + or_else(c->machine, "unknown machine");
  s += ", " + plural(static_cast<double>(k.workers_per_node), "worker", "workers") + " per node";
  s += ", batch " + count(k.batch_per_worker) + " per worker";
  if (k.accumulation_steps > 1) s += " x " + count(k.accumulation_steps) + " accumulation steps";
  return s + " (global batch " + count(c->global_batch()) + ")";
}

// A configuration of the planner's own JSON (the plan's choice) as the report's records hold one.
PlacedConfig placed_of(const json& candidate) {
  const auto field = [&](const char* key) { return static_cast<int64_t>(f::number(candidate, key).value_or(0)); };
  PlacedConfig c;
  c.machine = f::text(candidate, "machine", "");
  c.config = {field("nodes"), field("workers_per_node"), field("batch_per_worker"), field("accumulation_steps")};
  return c;
}

// "8 x cpu.small x 4 workers, batch 16 (global 512)", for tables.
std::string config_compact(const PlacedConfig& c) {
  const auto& k = c.config;
  std::string s = count(k.nodes) + " x " + or_else(c.machine, "?") + " x " +
                  plural(static_cast<double>(k.workers_per_node), "worker", "workers") + ", batch " +
                  count(k.batch_per_worker);
  if (k.accumulation_steps > 1) s += " x " + count(k.accumulation_steps) + " accumulated";
  return s + " (global " + count(c.global_batch()) + ")";
}

// "B=512, 8 workers", for chart labels.
std::string config_short(const PlacedConfig& c) {
  return "B=" + count(c.global_batch()) + ", " +
         plural(static_cast<double>(c.config.nodes * c.config.workers_per_node), "worker", "workers");
}

std::string missing(const std::string& what) { return "<p class=\"missing\">" + escape(what) + "</p>\n"; }
std::string para(const std::string& text, const std::string& cls = "") {
  return "<p" + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">" + escape(text) + "</p>\n";
}
std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>\n" + svg + "<figcaption>" + escape(caption) + "</figcaption>\n</figure>\n";
}
std::string bullets(const std::vector<std::string>& items) {
  std::string o = "<ul>\n";
  for (const auto& i : items) o += "<li>" + escape(i) + "</li>\n";
  return o + "</ul>\n";
}

// (predicted - measured) / measured, as in remaining_error.
std::optional<double> relative_error(std::optional<double> predicted, std::optional<double> measured) {
  if (!predicted || !measured || *measured == 0) return std::nullopt;
  return (*predicted - *measured) / *measured;
}

// What every section reads.
struct Ctx {
  const TuneReport& r;
  // False where a move to the plan's choice was declined after the pilot (it
  // did not pay for its restart) and the job started at the pilot's
  // configuration: the plan's intervals are then not the job's.
  bool started_at_plans_choice = true;
  std::string split = "test";  // the split the curve and the target were read on
  std::string currency = "USD";
  std::optional<double> measured_total{};
  bool finished = false;                // succeeded: the measured total is the job's real end
  std::vector<render::Rule> resizes{};  // applied re-plans, for every timeline chart
  std::vector<render::Band> bands{};    // when no training ran
};

std::string currency_of(const TuneReport& r) {
  if (r.price && !r.price->currency.empty()) return r.price->currency;
  return f::string(r.plan, "currency").value_or("USD");
}

std::optional<double> measured_total_of(const TuneReport& r) {
  if (r.measured && r.measured->time_s > 0) return r.measured->time_s;
  if (r.phases.total_s > 0) return r.phases.total_s;
  return std::nullopt;
}

// Where no training ran: before the first start of the workers, and between starts.
std::vector<render::Band> idle_bands(const TuneReport& r) {
  std::vector<render::Band> out;
  const double before = r.phases.profile_s + r.phases.pilot_s;
  const auto& segs = r.segments;
  if (!segs.empty() && segs[0].start_t_s > 0) {
    out.push_back({0, segs[0].start_t_s, "profile, pilots, plan"});
  } else if (before > 0) {
    out.push_back({0, before, "profile, pilots"});
  }
  for (size_t i = 0; i + 1 < segs.size(); ++i) {
    const auto end = segs[i].end_t_s;
    const double next = segs[i + 1].start_t_s;
    if (end && next > *end) out.push_back({*end, next, "restart"});
  }
  return out;
}

bool started_at_plans_choice(const TuneReport& r) {
  const json& planned = f::object(r.plan, "chosen");
  return !r.chosen || !planned.is_object() || placed_of(planned) == *r.chosen;
}

Ctx context_of(const TuneReport& r) {
  Ctx c{r};
  c.started_at_plans_choice = started_at_plans_choice(r);
  c.currency = currency_of(r);
  c.measured_total = measured_total_of(r);
  c.finished = r.state == records::TuneOutcome::Succeeded;
  if (r.measured && r.measured->evaluated_on) c.split = *r.measured->evaluated_on;
  for (const auto& rp : r.replans) {
    if (rp.applied) c.resizes.push_back({rp.t_s, "resize to " + config_short(rp.to), kResize, false});
  }
  c.bands = idle_bands(r);
  return c;
}

render::Axis elapsed_axis() {
  render::Axis a{"elapsed time since the job started", render::Unit::Seconds};
  a.scale = render::ScaleKind::Linear;
  a.from_zero = true;
  return a;
}

// ---- (1) the job ---------------------------------------------------------------

std::string goal_text(const records::ReportJob& job, const std::string& split) {
  if (job.target_accuracy) {
    return html::percent(*job.target_accuracy) + " " + split + " accuracy" +
           (split == "test" ? "" : " (the test split read once, at the end)");
  }
  if (job.epochs) return plural(*job.epochs, "epoch", "epochs");
  return "none";
}

std::string price_text(const Ctx& c) {
  if (!c.r.price) return "none";
  std::string s = html::money(c.r.price->per_hour, c.currency) + " per hour";
  if (!c.r.price->basis.empty()) s += " (" + c.r.price->basis + ")";
  return s;
}

std::string job_facts(const Ctx& c) {
  const auto& job = c.r.job;
  std::string objective = job.objective_text;
  if (!job.objective.empty()) objective = objective.empty() ? job.objective : objective + " (" + job.objective + ")";
  const bool running = c.r.state == records::TuneOutcome::Running;
  html::Table facts({}, "facts");
  auto fact = [&](const std::string& k, const std::string& v) {
    facts.row({html::raw("<strong>" + escape(k) + "</strong>"), html::text(v)});
  };
  fact("Objective", or_else(objective, "none"));
  fact("Target", goal_text(job, c.split));
  fact("Resources", or_else(job.resources, "none"));
  fact("Backend", or_else(job.backend, "none"));
  fact("Optimizer", or_else(job.optimizer, "none"));
  fact("Price", price_text(c));
  fact("Started", or_else(job.started, "not recorded"));
  fact("Finished", job.finished.value_or(running ? "not yet" : "not recorded"));
  fact("Job directory", or_else(job.out_dir, "not recorded"));
  return facts.str();
}

std::string header(const Ctx& c) {
  const std::string state(records::to_string(c.r.state));
  return "<p><span class=\"badge state-" + escape(state) + "\">" + escape(state) + "</span>" +
         escape(or_else(c.r.reason, "no reason was recorded")) + "</p>\n" + job_facts(c);
}

// ---- (2) the bill --------------------------------------------------------------

html::Cell error_cell(std::optional<double> e) {
  if (!e) return html::num("not measured");
  return html::Cell{escape(html::signed_percent(e)), std::abs(*e) <= 0.1 ? "num good" : "num bad"};
}

html::Cell accuracy_verdict(std::optional<double> accuracy, std::optional<double> target) {
  if (!accuracy) return html::num("not measured");
  if (!target) return html::num("no target");
  if (*accuracy >= *target) return html::Cell{"target reached", "num good"};
  return html::Cell{escape(format_number(100 * (*target - *accuracy), 3) + " points short"), "num bad"};
}

// Predicted against measured: time, cost, steps, epochs and accuracy.
std::string bill_table(const Ctx& c) {
  static const json not_run;  // the plan's choice was not run: no interval or count of its stands for the job
  const json& plan_chosen = c.started_at_plans_choice ? f::object(c.r.plan, "chosen") : not_run;
  // The plan's interval for the chosen configuration, as "lo to hi".
  auto interval = [&](const std::string& key, const std::function<std::string(double)>& fmt) {
    const json& i = f::object(plan_chosen, key);
    const auto lo = f::number(i, "lo"), hi = f::number(i, "hi");
    return html::text(lo && hi ? fmt(*lo) + " to " + fmt(*hi) : std::string("none"));
  };
  const auto secs = [](double v) { return html::seconds(v); };
  const auto cash = [&](double v) { return html::money(v, c.currency); };
  const auto counted = [](double v) { return html::number(v, 4); };
  const auto& pred = c.r.predicted;
  const auto& meas = c.r.measured;
  const auto pt = pred ? std::optional(pred->time_s) : std::nullopt, pc = pred ? std::optional(pred->cost) : std::nullopt;
  const auto mt = meas ? std::optional(meas->time_s) : std::nullopt, mc = meas ? std::optional(meas->cost) : std::nullopt;
  const auto steps_p = estimate(f::at(plan_chosen, "steps")), ep_p = estimate(f::at(plan_chosen, "epochs"));
  const auto steps_m = meas ? std::optional(static_cast<double>(meas->steps)) : std::nullopt;
  const auto ep_m = meas ? std::optional(meas->epochs) : std::nullopt;
  const auto target = c.r.job.target_accuracy;
  const auto acc = meas ? meas->final_accuracy : std::nullopt;

  // A job stopped before its end measured a part of what the plan predicted: no error to show.
  const bool whole = records::measured_whole_job(c.r);
  const auto error = [&](std::optional<double> predicted, std::optional<double> measured) {
    return whole ? error_cell(relative_error(predicted, measured)) : html::num("not run to its end");
  };
  html::Table t({"", "predicted", whole ? "measured" : "measured so far", "error", "plan's interval"});
  t.row({html::text("Total time"), html::num(html::seconds(pt, "none")), html::num(html::seconds(mt)),
         error(pt, mt), interval("time_s", secs)});
  t.row({html::text("Cost"), html::num(html::money(pc, c.currency, "none")), html::num(html::money(mc, c.currency)),
         error(pc, mc), interval("cost", cash)});
  t.row({html::text("Steps"), html::num(html::number(steps_p, 4, "none")), html::num(html::number(steps_m, 8)),
         error(steps_p, steps_m), interval("steps", counted)});
  t.row({html::text("Epochs"), html::num(html::number(ep_p, 3, "none")), html::num(html::number(ep_m, 3)),
         error(ep_p, ep_m), interval("epochs", counted)});
  if (c.split != "test") {
    // The target was judged on the curve's split; the test split's number stands beside it, unjudged.
    const auto best = meas ? meas->best_accuracy : std::nullopt;
    t.row({html::text("Best " + c.split + " accuracy"), html::num(target ? "target " + html::percent(target) : "no target"),
           html::num(html::percent(best)), accuracy_verdict(best, target), html::text("")});
    t.row({html::text("Final test accuracy"), html::num(""), html::num(html::percent(acc)), html::text(""),
           html::text("")});
  } else {
    t.row({html::text("Final test accuracy"), html::num(target ? "target " + html::percent(target) : "no target"),
           html::num(html::percent(acc)), accuracy_verdict(acc, target), html::text("")});
  }
  return t.str();
}

// The phases' times and shares, as a table and as one bar.
std::string phases(const Ctx& c) {
  const auto& ph = c.r.phases;
  std::string o = "<h3>Phases</h3>\n";
  const double parts_s = ph.profile_s + ph.pilot_s + ph.train_s + ph.restart_s + ph.queue_s;
  if (ph.total_s <= 0 && parts_s <= 0) return o + missing("No phase was timed.");
  double share = ph.profiling_share;
  if (share == 0 && ph.total_s > 0) share = (ph.profile_s + ph.pilot_s) / ph.total_s;
  html::Table p({"phase", "time", "share of the job"});
  auto row = [&](const std::string& name, double v) {
    p.row({html::text(name), html::num(html::seconds(v)),
           html::num(ph.total_s > 0 ? html::percent(v / ph.total_s, 3) : "")});
  };
  row("profile", ph.profile_s);
  row("pilot runs", ph.pilot_s);
  row("training", ph.train_s);
  row("restarts (moves, retries, resumes)", ph.restart_s);
  if (ph.queue_s > 0) row("waiting in the cluster's queue", ph.queue_s);
  row("total", ph.total_s);
  p.row({html::text("profiling share (profile and pilots)"), html::num(html::percent(share, 3)), html::text("")});
  std::vector<render::Part> parts = {{"profile", ph.profile_s, "#8c564b"},
                                     {"pilot", ph.pilot_s, "#e377c2"},
                                     {"training", ph.train_s, kPredicted},
                                     {"restarts", ph.restart_s, kResize}};
  if (ph.queue_s > 0) parts.push_back({"queue", ph.queue_s, "#17becf"});
  const double other = ph.total_s - parts_s;
  if (other > 0.005 * ph.total_s) parts.push_back({"other (planning, start-up)", other, "#bbbbbb"});
  return o + p.str() + render::phase_bar_svg(parts);
}

std::string bill(const Ctx& c) {
  const std::string at = c.r.predicted ? c.r.predicted->at : "";
  return bill_table(c) +
         para("Errors are (predicted - measured) / measured: a negative error means the prediction was optimistic." +
                  (at.empty() ? std::string() : " The prediction is the one made at: " + at + ".") +
                  (c.finished ? "" : " The job did not succeed, so the measured numbers cover only what ran."),
              "note") +
         phases(c);
}

// ---- (3) the choice ------------------------------------------------------------

using TimeCost = std::optional<std::pair<double, double>>;

TimeCost time_cost(const json& row) {
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

// Every configuration the plan evaluated, where it carries them: (time, cost) rows.
render::Series planner_cloud(const json& plan) {
  render::Series cloud{"a configuration the planner evaluated", {}, "#8a8a8a", render::Style::Faint};
  for (const auto& row : f::array(f::at(plan, "candidates"), "rows")) {
    if (row.is_array() && row.size() >= 2) {
      const auto t = f::number(row[0]), k = f::number(row[1]);
      if (t && k) cloud.points.push_back({*t, *k});
    }
  }
  return cloud;
}

bool same_point(const TimeCost& a, const TimeCost& b) {
  return a && b && std::abs(a->first - b->first) <= 1e-9 * std::abs(a->first) &&
         std::abs(a->second - b->second) <= 1e-9 * std::abs(a->second);
}

// What the job measured, where it ran to its end.
TimeCost measured_point(const Ctx& c) {
  if (!c.finished || !c.r.measured) return std::nullopt;
  return std::pair{c.r.measured->time_s, c.r.measured->cost};
}

render::Axis front_time_axis(const json& plan) {
  const auto epochs = f::number(plan, "epochs");
  const bool to_target = f::boolean(plan, "to_target").value_or(true) || !epochs;
  return {to_target ? "predicted time to the target" : "predicted time for " + plural(*epochs, "epoch", "epochs"),
          render::Unit::Seconds};
}

std::string pareto_chart(const Ctx& c, const json& plan) {
  render::Chart ch;
  ch.title = "The time/cost front the plan chose from";
  ch.x = front_time_axis(plan);
  ch.y = {"predicted cost", render::Unit::Money, c.currency};
  ch.empty_text = "the plan lists no configuration";
  const render::Series cloud = planner_cloud(plan);
  render::Series front{"Pareto front", {}, kPredicted, render::Style::LineDots};
  TimeCost chosen;
  for (const auto& row : f::array(plan, "front")) {
    if (const auto tc = time_cost(row)) {
      front.points.push_back(*tc);
      if (has_mark(row, "chosen")) chosen = tc;
    }
  }
  if (!chosen) chosen = time_cost(f::object(plan, "chosen"));
  const auto knee = time_cost(f::object(plan, "knee"));
  const auto measured = measured_point(c);
  const bool same = same_point(knee, chosen);
  if (!cloud.points.empty()) ch.series.push_back(cloud);
  ch.series.push_back(front);
  if (knee) ch.markers.push_back({knee->first, knee->second, render::Shape::Ring, same ? "knee (chosen)" : "knee", kTarget});
  if (chosen && !same) ch.markers.push_back({chosen->first, chosen->second, render::Shape::Diamond, "chosen", "#111111", true});
  if (measured) ch.markers.push_back({measured->first, measured->second, render::Shape::Star, "measured", kMeasured, true});

  std::string caption = cloud.points.empty()
                            ? "The plan did not carry its evaluated configurations, so only the front is drawn"
                            : "Faint dots: every configuration the planner evaluated";
  caption += "; blue: the Pareto front (no configuration is both faster and cheaper); red ring: the knee";
  if (chosen && !same) caption += "; black diamond: the configuration the objective chose";
  if (measured) caption += "; green star: what the job measured";
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
    t.row({html::num(fmt::format("{}", i + 1)), html::text(f::text(r, "machine", "")), n6("nodes"),
           n6("workers_per_node"), n6("batch_per_worker"), n6("accumulation_steps"), n6("global_batch"),
           html::num(html::seconds(f::number(r, "iteration_s"), "")),
           html::num(html::seconds(f::number(r, "time_s"), "")),
           html::num(html::money(f::number(r, "cost"), c.currency, "")), html::text(marks, "mark")},
          has_mark(r, "chosen") ? "chosen" : "");
  }
  std::string o = "<h3>The front</h3>\n" + t.str();
  if (rows.size() < n)
    o += para(fmt::format("{} more configurations on the front are in report.json.", n - rows.size()), "note");
  return o;
}

// "12000 configurations enumerated, 800 feasible, 9 on the time/cost front; planned in 1.2 s."
std::string plan_summary(const json& plan) {
  std::string summary;
  if (const auto e = f::number(plan, "enumerated")) summary += format_number(*e, 10) + " configurations enumerated";
  if (const auto fe = f::number(plan, "feasible")) {
    summary += (summary.empty() ? "" : ", ") + format_number(*fe, 10) + " feasible";
  }
  summary += fmt::format("{}{} on the time/cost front", summary.empty() ? "" : ", ", f::array(plan, "front").size());
  if (const auto s = f::number(plan, "planning_seconds")) summary += "; planned in " + common::format_seconds(*s);
  return para(summary + ".");
}

// A titled list of the plan's strings (anything else as its JSON).
std::string plan_list(const std::string& title, const json& items, const std::string& none) {
  std::string s = "<h3>" + escape(title) + "</h3>\n";
  if (items.empty()) return s + missing(none);
  std::vector<std::string> texts;
  for (const auto& a : items) texts.push_back(a.is_string() ? a.get<std::string>() : a.dump());
  return s + bullets(texts);
}

std::string why_this_configuration(const json& plan) {
  std::string o = "<h3>Why this configuration</h3>\n";
  o += para(f::text(plan, "explanation", "The plan gives no explanation."), "explanation");
  if (const auto st = f::string(f::object(plan, "knee_sensitivity"), "statement")) o += para("Knee: " + *st, "explanation");
  if (f::boolean(plan, "knee_detected") == false) {
    o += para("The plan detected no knee on this front; the knee's statement above says what it took instead.", "note");
  }
  return o;
}

std::string choice(const Ctx& c) {
  const json& plan = c.r.plan;
  std::string o = "<p><strong>Started with:</strong> " + escape(config_text(c.r.chosen)) + "</p>\n";
  if (!c.started_at_plans_choice) {
    o += para("The plan chose " + config_text(placed_of(f::object(plan, "chosen"))) +
              "; the job stayed where the pilot's workers ran, because the move did not pay for its restart by "
              "--min-saving (the re-plans say by how much). The plan's intervals below are for its choice.");
  }
  if (!plan.is_object()) {
    return o + missing("No plan: the job ended before planning finished, so there is no front to show.");
  }
  o += plan_summary(plan) + pareto_chart(c, plan);
  if (const auto limit = f::string(plan, "limit")) o += para("What limits the chosen configuration most: " + *limit + ".");
  o += why_this_configuration(plan) + front_table(c, plan);
  o += plan_list("Assumptions", f::array(plan, "assumptions"), "none");
  if (!f::array(plan, "skipped").empty()) o += plan_list("Left out of the plan", f::array(plan, "skipped"), "none");
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

// The watch points' time against one of their values.
template <typename Y>
Points along(const Ctx& c, Y y) {
  return points(c.r.timeline, [](const records::TimelinePoint& w) { return w.t_s; }, y);
}

std::string resize_note(const Ctx& c) { return c.resizes.empty() ? "" : " Orange lines: a resize (an applied re-plan)."; }

std::string total_time_chart(const Ctx& c) {
  auto ch = timeline_chart(c, "Predicted total time, from each watch point",
                           {"total time of the job", render::Unit::Seconds});
  ch.series.push_back(run_series(c, "predicted total", along(c, [](const auto& w) { return w.predicted_total_s; }),
                                 kPredicted));
  if (c.measured_total) {
    ch.hlines.push_back({*c.measured_total,
                         (c.finished ? "measured total " : "time run so far ") + html::seconds(c.measured_total),
                         kMeasured, false});
  }
  if (c.r.predicted) {
    ch.hlines.push_back({c.r.predicted->time_s, "plan's prediction " + html::seconds(c.r.predicted->time_s), kPlan, true});
  }
  return figure(render::chart_svg(ch),
                "What the job expected its whole run to take, as predicted from each watch point, against what it "
                "took." + resize_note(c));
}

// "its 80% range": the remaining time's range, as the watches predict it.
std::string range_name() { return fmt::format("its {:.0f}% range", 100 * records::kRemainingRangeLevel); }

std::string remaining_time_chart(const Ctx& c) {
  auto ch = timeline_chart(c, "Remaining time: predicted and measured", {"remaining time", render::Unit::Seconds});
  ch.series.push_back(run_series(c, "predicted remaining",
                                 along(c, [](const auto& w) { return w.predicted_remaining_s; }), kPredicted));
  // The range's ends, where the watches had one (toward a target).
  const auto end_of_range = [](double records::SecondsRange::*end) {
    return [end](const records::TimelinePoint& w) {
      return w.predicted_remaining_range ? std::optional<double>((*w.predicted_remaining_range).*end) : std::nullopt;
    };
  };
  auto low = along(c, end_of_range(&records::SecondsRange::low_s));
  if (!low.empty()) {
    ch.series.push_back(run_series(c, range_name() + ", low end", std::move(low), kPredicted, render::Style::Dashed));
    ch.series.push_back(run_series(c, range_name() + ", high end",
                                   along(c, end_of_range(&records::SecondsRange::high_s)), kPredicted,
                                   render::Style::Dashed));
  }
  if (c.finished && c.measured_total) {
    const double end = *c.measured_total;
    ch.series.push_back({"measured remaining (the real end minus the time)",
                         along(c, [&](const auto& w) { return std::max(0.0, end - w.t_s); }), kMeasured,
                         render::Style::Line});
  }
  return figure(render::chart_svg(ch),
                std::string("At each watch point, the remaining time the model predicted") +
                    (c.finished ? " and the remaining time there really was."
                                : "; the job did not succeed, so the real remaining time is unknown.") +
                    resize_note(c));
}

std::string iteration_time_chart(const Ctx& c) {
  auto ch = timeline_chart(c, "Iteration time", {"seconds per step", render::Unit::Seconds});
  ch.series.push_back(run_series(c, "measured", along(c, [](const auto& w) { return w.iteration_s; }), kMeasured));
  ch.series.push_back(run_series(c, "predicted", along(c, [](const auto& w) { return w.iteration_s_predicted; }),
                                 kPredicted, render::Style::Dashed));
  ch.empty_text = "no iteration time was measured";
  return figure(render::chart_svg(ch),
                "Measured seconds per optimizer step against the model's prediction for the configuration running "
                "at the time." + resize_note(c));
}

// Accuracy from the evaluations, and any the watch points carry.
std::string accuracy_chart(const Ctx& c) {
  Points acc = points(c.r.evaluations, [](const auto& e) { return e.t_s; }, [](const auto& e) { return e.test_accuracy; });
  for (const auto& p : along(c, [](const auto& w) { return w.test_accuracy; })) acc.push_back(p);
  std::sort(acc.begin(), acc.end());
  acc.erase(std::unique(acc.begin(), acc.end()), acc.end());
  if (acc.empty()) return c.r.timeline.empty() ? "" : missing("No " + c.split + " accuracy was measured.");
  const auto target = c.r.job.target_accuracy;
  const std::string title = c.split == "test" ? "Test accuracy" : "Validation accuracy";
  auto ch = timeline_chart(c, title, {c.split + " accuracy", render::Unit::Percent});
  ch.y.scale = render::ScaleKind::Linear;
  ch.series.push_back({"measured " + c.split + " accuracy", acc, kMeasured, render::Style::LineDots});
  if (target) ch.hlines.push_back({*target, "target " + html::percent(target), kTarget, true});
  return figure(render::chart_svg(ch),
                title + " at each evaluation" + std::string(target ? ", against the target." : ".") + resize_note(c));
}

std::string noise_chart(const Ctx& c) {
  const Points noise = along(c, [](const auto& w) { return w.b_noise; });
  if (noise.empty()) return missing("The gradient noise scale was not measured.");
  auto ch = timeline_chart(c, "Gradient noise scale", {"samples", render::Unit::Number});
  ch.series.push_back(run_series(c, "noise scale B_noise", noise, "#9467bd"));
  ch.series.push_back({"global batch", along(c, [](const auto& w) { return static_cast<double>(w.global_batch); }),
                       "#555555", render::Style::Step});
  return figure(render::chart_svg(ch),
                "The simple gradient noise scale measured along the run, beside the global batch. Batches well "
                "below it use the data efficiently; batches far above it buy little per extra sample." +
                    resize_note(c));
}

// One start of the workers each.
// "; waited 12 s in the queue (not billed)" for a launch that queued.
std::string queue_words(const records::SegmentRecord& s) {
  if (!s.queued_s || *s.queued_s <= 0) return "";
  return "; waited " + html::seconds(*s.queued_s) + " in the queue (" + (s.queue_billed ? "billed" : "not billed") + ")";
}

std::string segments_table(const Ctx& c) {
  if (c.r.segments.empty()) return "";
  html::Table t({"#", "from", "to", "steps", "configuration", "exit"});
  size_t i = 0;
  for (const auto& s : c.r.segments) {
    const auto last = s.last_step ? std::optional(static_cast<double>(*s.last_step)) : std::nullopt;
    t.row({html::num(fmt::format("{}", ++i)), html::num(html::seconds(s.start_t_s, "none")),
           html::num(html::seconds(s.end_t_s, "none")),
           html::num(count(s.first_step) + " to " + html::number(last, 10, "?")), html::text(config_compact(s.config)),
           html::text(or_else(s.exit, "none") + queue_words(s))});
  }
  return "<h3>Segments (one start of the workers each)</h3>\n" + t.str();
}

std::string along_the_run(const Ctx& c) {
  std::string o;
  if (c.r.timeline.empty()) {
    o += missing("No watch point was recorded: the job ended before training reported progress.");
  } else {
    o += total_time_chart(c) + remaining_time_chart(c) + iteration_time_chart(c);
  }
  o += accuracy_chart(c);
  if (!c.r.timeline.empty()) o += noise_chart(c);
  return o + segments_table(c);
}

// ---- (5) re-plans --------------------------------------------------------------

// The numbers the decision weighed, as "b_noise 900, compute_scale 1.32, ...".
std::string numbers_text(const records::ReplanRecord::Numbers& n) {
  const std::vector<std::pair<const char*, std::optional<double>>> items = {
      {"b_noise", n.b_noise},
      {"iteration_s_measured", n.iteration_s_measured},
      {"iteration_s_planned", n.iteration_s_planned},
      {"compute_scale", n.compute_scale},
      {"remaining_s_here", n.remaining_s_here},
      {"remaining_s_there", n.remaining_s_there},
      {"remaining_fraction", n.remaining_fraction}};
  std::string s;
  for (const auto& [name, v] : items) {
    if (v) s += (s.empty() ? "" : ", ") + std::string(name) + " " + format_number(*v, 4);
  }
  return s;
}

// The watch's verdict on the target, where it gave one.
std::string give_up_text(const Ctx& c) {
  if (!c.r.give_up) return "";
  const auto& g = *c.r.give_up;
  return para("Target judged out of reach at " + html::seconds(g.t_s) + " (step " + count(g.step) + ", epoch " +
                  format_number(g.epoch, 3) + ", best " + html::percent(g.best_accuracy, 3) + "): " + g.reason +
                  (g.acted ? ". The job stopped there." : ". Written down only (--on-out-of-reach continue): the job went on."),
              "note");
}

std::string replan_table(const Ctx& c) {
  if (c.r.replans.empty()) {
    const bool ran = !c.r.timeline.empty() || !c.r.segments.empty();
    return missing(ran ? "none: the plan held for the whole run." : "none: no training ran to re-plan.");
  }
  html::Table t({"time", "step", "from", "to", "reason", "predicted saving", "restart cost", "applied"});
  for (const auto& r : c.r.replans) {
    const std::string reason =
        escape(or_else(r.reason, "no reason recorded")) + "<br/><small>" + escape(numbers_text(r.numbers)) + "</small>";
    t.row({html::num(html::seconds(r.t_s)), html::num(count(r.step)), html::text(config_compact(r.from)),
           html::text(config_compact(r.to)), html::raw(reason), html::num(html::seconds(r.predicted_saving_s)),
           html::num(html::seconds(r.restart_cost_s)),
           html::text(r.applied ? "applied" : "not applied", r.applied ? "yes" : "")},
          r.applied ? "" : "skipped");
  }
  return t.str() +
         para("A re-plan is applied when its predicted saving outweighs the restart it costs; applied ones are the "
              "orange lines on the charts above.",
              "note");
}

std::string replans(const Ctx& c) { return replan_table(c) + give_up_text(c); }

// ---- (6) remaining-time error --------------------------------------------------

std::string remaining_error(const Ctx& c) {
  const auto& rows = c.r.remaining_error;
  if (rows.empty()) {
    return missing("not measured: the job did not run to its end, so the real remaining time is unknown.");
  }
  html::Table t({"point of the run", "elapsed", "predicted remaining", range_name(), "measured remaining", "error"});
  double sum = 0;
  for (const auto& r : rows) {
    sum += std::abs(r.error);
    const std::string range =
        r.predicted_range ? html::seconds(r.predicted_range->low_s) + " to " + html::seconds(r.predicted_range->high_s) +
                                (r.predicted_range->holds(r.measured_remaining_s) ? " (within)" : " (outside)")
                          : "-";
    t.row({html::num(html::percent(r.fraction, 3)), html::num(html::seconds(r.t_s)),
           html::num(html::seconds(r.predicted_remaining_s)), html::num(range),
           html::num(html::seconds(r.measured_remaining_s)), error_cell(r.error)});
  }
  return t.str() + para("Mean absolute error: " + html::percent(sum / static_cast<double>(rows.size()), 3) +
                            " (error = (predicted - measured) / measured).",
                        "note");
}

std::string notes(const Ctx& c) { return c.r.notes.empty() ? missing("none") : bullets(c.r.notes); }

// A section whose failure to draw says so in its place instead of failing the page.
std::string section(const std::string& id, const std::string& title, const std::function<std::string()>& body) {
  std::string inner;
  try {
    inner = body();
  } catch (const std::exception& e) {
    inner = missing(std::string("This section could not be drawn: ") + e.what());
  }
  return "<section id=\"" + id + "\">\n<h2>" + escape(title) + "</h2>\n" + inner + "</section>\n";
}

std::string title_of(const TuneReport& r) {
  return or_else(r.job.model, "unknown model") + " on " + or_else(r.job.dataset, "unknown data set");
}

}  // namespace

std::string render_report_body(const TuneReport& report) {
  const Ctx c = context_of(report);
  std::string o = "<header>\n<h1>" + escape(title_of(report)) + "</h1>\n";
  o += "<nav><a href=\"#bill\">The bill</a><a href=\"#choice\">The choice</a><a href=\"#run\">Along the run</a>"
       "<a href=\"#replans\">Re-plans</a><a href=\"#remaining\">Remaining-time error</a><a "
       "href=\"#notes\">Notes</a></nav>\n";
  o += header(c) + "</header>\n";
  o += section("bill", "The bill", [&] { return bill(c); });
  o += section("choice", "The choice", [&] { return choice(c); });
  o += section("run", "Along the run: predicted against measured", [&] { return along_the_run(c); });
  o += section("replans", "Re-plans", [&] { return replans(c); });
  o += section("remaining", "Remaining-time error at 25, 50 and 75% of the run", [&] { return remaining_error(c); });
  o += section("notes", "Notes", [&] { return notes(c); });
  return o;
}

const char* report_css() { return kCss; }

std::string render_report_html(const TuneReport& report) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
       "<title>" +
       escape("Tula tune report: " + title_of(report)) + "</title>\n<style>" + std::string(kCss) +
       "</style>\n</head>\n<body>\n<main>\n";
  o += render_report_body(report);
  o += "<footer>Written by tula from report.json (format tula-tune-report, version 1). This page needs no network "
       "and no script.</footer>\n</main>\n</body>\n</html>\n";
  return o;
}

}  // namespace tula::tune
