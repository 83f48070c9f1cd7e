#include "service/web_page.hpp"

#include "render/chart.hpp"
#include "render/escape.hpp"
#include "render/html.hpp"
#include "tune/report_html.hpp"

namespace tula::service {

using nlohmann::json;
using render::escape;
namespace html = render::html;

namespace {

const char* const kPageCss = R"(
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
[hidden]{display:none!important}
.top{background:#1f3a5f;color:#fff;padding:.6em 1.2em}.top a{color:#fff;margin-right:1em}
.wrap{max-width:1100px;margin:0 auto;padding:1em}
table.jobs{border-collapse:collapse;width:100%;background:#fff}
table.jobs td,table.jobs th{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left}
.state{font-weight:600}.state-succeeded{color:#2a7d2a}.state-failed{color:#b22}.state-cancelled{color:#777}
.bar{background:#e3e3e3;height:.8em;width:10em;display:inline-block;border-radius:.4em;overflow:hidden}
.bar>span{background:#1f77b4;height:100%;display:block}
form.submit{background:#fff;border:1px solid #ddd;padding:1em;margin:1em 0;display:grid;grid-template-columns:12em 1fr;gap:.4em 1em;max-width:40em}
form.submit button{grid-column:2;justify-self:start}
form.token{background:#fff8e1;border:1px solid #e0c060;padding:.6em 1em;margin:.6em 0}
.error{color:#b22}
.status{background:#fff;border:1px solid #ddd;padding:.6em 1em;margin:.6em 0}
#raw_box{background:#fff;border:1px solid #ddd;padding:.6em 1em;margin:.6em 0}#raw{white-space:pre-wrap;max-height:30em;overflow:auto}
)";

// The head and the parts every page has: the token form (shown when the
// server asks for one) and a box for the answers the API links open.
std::string top(const std::string& title, const std::string& body_data) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<link rel=\"icon\" href=\"data:,\"/>\n<title>" +
         escape(title) +
         "</title>\n<link rel=\"stylesheet\" href=\"/static/tula.css\"/>\n<script src=\"/static/tula.js\" defer></script>\n"
         "</head>\n<body " + body_data + ">\n"
         "<div class=\"top\"><a href=\"/\">Tula jobs</a><a href=\"/metrics\" class=\"api-link\">metrics</a></div>\n"
         "<div class=\"wrap\">\n"
         "<form class=\"token\" id=\"token_form\" hidden><label for=\"token\">API token</label> "
         "<input id=\"token\" type=\"password\" autocomplete=\"off\"/> <button type=\"submit\" id=\"token_button\">Use</button> "
         "<span class=\"error\" id=\"token_message\"></span></form>\n"
         "<section id=\"raw_box\" hidden><p><button type=\"button\" id=\"raw_close\">Close</button> <code id=\"raw_title\"></code></p>"
         "<pre id=\"raw\"></pre></section>\n";
}

const char* const kBottom = "</div>\n</body>\n</html>\n";

}  // namespace

std::string jobs_page() {
  std::string o = top("Tula jobs", "data-page=\"jobs\"");
  o += R"(<h1>Jobs</h1>
<form class="submit" id="submit">
<label for="model">Model</label><select id="model" name="model"><option>small_cnn</option><option>lenet5</option><option>resnet20</option></select>
<label for="dataset">Data set</label><select id="dataset" name="dataset"><option>fashion-mnist</option><option>mnist</option><option>synthetic</option></select>
<label for="goal">Goal</label><select id="goal"><option value="target_accuracy">target test accuracy</option><option value="epochs">epochs</option></select>
<label for="goal_value">Value</label><input id="goal_value" value="0.85"/>
<label for="objective">Objective</label><select id="objective"><option>knee</option><option>fastest</option><option>cheapest</option></select>
<label for="extra">More fields (JSON)</label><input id="extra" value="{}"/>
<button type="submit" id="submit_button">Submit</button>
<span></span><span class="error" id="submit_error"></span>
</form>
<table class="jobs"><thead><tr><th>Job</th><th>Model</th><th>Goal</th><th>State</th><th>Progress</th><th>Best accuracy</th></tr></thead>
<tbody id="jobs"><tr><td colspan="6">loading…</td></tr></tbody></table>
)";
  return o + kBottom;
}

std::string job_page(int64_t id) {
  const std::string n = std::to_string(id);
  std::string o = top("Tula job " + n, "data-page=\"job\" data-job=\"" + n + "\"");
  o += "<h1>Job " + n + "</h1>\n<p><button id=\"cancel\">Cancel</button> <span class=\"error\" id=\"cancel_error\"></span> "
       "<a href=\"/v1/jobs/" + n + "\" class=\"api-link\">JSON</a></p>\n<div id=\"live\">loading…</div>\n";
  return o + kBottom;
}

std::string page_style() { return std::string(kPageCss) + tune::report_css(); }

std::string job_fragment(const json& detail, const records::TuneReport* report,
                         const std::vector<records::MetricsRecord>& metrics) {
  const std::string state = detail.value("state", "");
  const json& p = detail.contains("progress") ? detail["progress"] : json::object();
  const json& pm = detail.contains("predicted_vs_measured") ? detail["predicted_vs_measured"] : json::object();
  const auto num = [](const json& o, const char* k) -> std::optional<double> {
    if (o.is_object() && o.contains(k) && o[k].is_number()) return o[k].get<double>();
    return std::nullopt;
  };
  const int percent = static_cast<int>(100 * num(p, "fraction").value_or(0));
  std::string o = "<div class=\"status\" id=\"status\" data-state=\"" + escape(state) + "\">";
  o += "<p>State: <span class=\"state state-" + escape(state) + "\" id=\"state\">" + escape(state) + "</span>";
  if (!detail.value("reason", "").empty()) o += " (" + escape(detail.value("reason", "")) + ")";
  o += "</p>\n<p><span class=\"bar\"><span style=\"width:" + std::to_string(percent) + "%\"></span></span> " +
       std::to_string(percent) + "% · step " + html::number(num(p, "steps"), 6, "0") + " · epoch " +
       html::number(num(p, "epochs"), 3, "0") + " · best test accuracy " + html::percent(num(p, "best_accuracy"), 3, "none yet") +
       "</p>\n";
  o += "<p id=\"predicted-vs-measured\">Time: predicted " + html::seconds(num(pm, "predicted_time_s"), "not yet planned") +
       " at the plan, latest prediction " + html::seconds(num(pm, "latest_predicted_time_s"), "none yet") + ", measured " +
       html::seconds(num(pm, "measured_time_s"), "0 s") + ". Cost: predicted " +
       html::money(num(pm, "predicted_cost"), "USD", "not yet planned") + ", measured " +
       html::money(num(pm, "measured_cost"), "USD", "0") + ".</p>\n</div>\n";

  // Loss per step and test accuracy, from the metrics file (the report's
  // charts have the accuracy against time, not the loss).
  render::Series train{"training loss", {}, "#1f77b4", render::Style::Line};
  render::Series test{"test loss", {}, "#ff7f0e", render::Style::LineDots};
  render::Series accuracy{"test accuracy", {}, "#2ca02c", render::Style::LineDots};
  for (const auto& r : metrics) {
    if (const auto* step = std::get_if<records::IterRecord>(&r)) {
      train.points.push_back({static_cast<double>(step->step), step->loss});
    } else if (const auto e = records::evaluation_of(r)) {
      test.points.push_back({static_cast<double>(e->step), e->evaluation.test_loss});
      accuracy.points.push_back({static_cast<double>(e->step), e->evaluation.test_accuracy});
    }
  }
  if (train.points.size() > 400) {  // a chart of 400 points shows the curve; thousands only weigh the page
    std::vector<std::pair<double, double>> kept;
    for (size_t i = 0; i < 400; ++i) kept.push_back(train.points[(i + 1) * train.points.size() / 400 - 1]);
    train.points = kept;
  }
  render::Chart loss;
  loss.title = "Loss";
  loss.x = {"optimizer step", render::Unit::Number, "USD", render::ScaleKind::Linear, true};
  loss.y = {"loss", render::Unit::Number, "USD", render::ScaleKind::Linear, true};
  loss.series = {train, test};
  loss.empty_text = "no step measured yet";
  render::Chart acc;
  acc.title = "Test accuracy";
  acc.x = loss.x;
  acc.y = {"test accuracy", render::Unit::Percent, "USD", render::ScaleKind::Linear, false};
  acc.series = {accuracy};
  acc.empty_text = "no evaluation yet";
  o += "<section id=\"curves\"><h2>Loss and accuracy</h2>\n" + render::chart_svg(loss) + render::chart_svg(acc) + "</section>\n";
  if (report) {
    o += tune::render_report_body(*report);
  } else {
    o += "<p>No report yet: the job is " + escape(state) + ".</p>\n";
  }
  return o;
}

}  // namespace tula::service
