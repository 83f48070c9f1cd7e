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
.top{background:#1f3a5f;color:#fff;padding:.6em 1.2em}.top a{color:#fff;margin-right:1em}
.wrap{max-width:1100px;margin:0 auto;padding:1em}
table.jobs{border-collapse:collapse;width:100%;background:#fff}
table.jobs td,table.jobs th{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left}
.state{font-weight:600}.state-succeeded{color:#2a7d2a}.state-failed{color:#b22}.state-cancelled{color:#777}
.bar{background:#e3e3e3;height:.8em;width:10em;display:inline-block;border-radius:.4em;overflow:hidden}
.bar>span{background:#1f77b4;height:100%;display:block}
form.submit{background:#fff;border:1px solid #ddd;padding:1em;margin:1em 0;display:grid;grid-template-columns:12em 1fr;gap:.4em 1em;max-width:40em}
form.submit button{grid-column:2;justify-self:start}
.error{color:#b22}
.status{background:#fff;border:1px solid #ddd;padding:.6em 1em;margin:.6em 0}
)";

std::string top(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<link rel=\"icon\" href=\"data:,\"/>\n<title>" + escape(title) +
         "</title>\n<style>" + kPageCss + tune::report_css() +
         "</style>\n</head>\n<body>\n<div class=\"top\"><a href=\"/\">Tula jobs</a><a href=\"/metrics\">metrics</a></div>\n"
         "<div class=\"wrap\">\n";
}

const char* const kBottom = "</div>\n</body>\n</html>\n";

}  // namespace

std::string jobs_page() {
  std::string o = top("Tula jobs");
  o += R"(<h1>Jobs</h1>
<form class="submit" id="submit">
<label for="model">Model</label><select id="model" name="model"><option>small_cnn</option><option>lenet5</option><option>resnet20</option></select>
<label for="dataset">Data set</label><select id="dataset" name="dataset"><option>fashion-mnist</option><option>mnist</option><option>synthetic</option></select>
<label for="goal">Goal</label><select id="goal"><option value="target_accuracy">target test accuracy</option><option value="epochs">epochs</option></select>
<label for="goal_value">Value</label><input id="goal_value" value="0.85"/>
<label for="objective">Objective</label><select id="objective"><option>knee</option><option>fastest</option><option>cheapest</option></select>
<label for="extra">More fields (JSON)</label><input id="extra" value="{}"/>
<label for="token">API token (if set)</label><input id="token" type="password"/>
<button type="submit" id="submit_button">Submit</button>
<span></span><span class="error" id="submit_error"></span>
</form>
<table class="jobs"><thead><tr><th>Job</th><th>Model</th><th>Goal</th><th>State</th><th>Progress</th><th>Best accuracy</th></tr></thead>
<tbody id="jobs"><tr><td colspan="6">loading…</td></tr></tbody></table>
<script>
function esc(s){return String(s).replace(/[&<>"']/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));}
async function refresh(){
  const r=await fetch('/v1/jobs?limit=100'); if(!r.ok) return;
  const body=await r.json(); const rows=body.jobs.map(j=>{
    const p=j.progress||{}; const f=Math.round(100*(p.fraction||0));
    const goal=j.target_accuracy!==null?('to '+(100*j.target_accuracy).toFixed(1)+'%'):(j.epochs+' epochs');
    const best=p.best_accuracy!=null?(100*p.best_accuracy).toFixed(2)+'%':'';
    return `<tr id="job-${j.id}"><td><a href="/jobs/${j.id}">${j.id}</a></td><td>${esc(j.model)} on ${esc(j.dataset)}</td><td>${esc(goal)}, ${esc(j.objective)}</td>`+
      `<td class="state state-${esc(j.state)}">${esc(j.state)}</td><td><span class="bar"><span style="width:${f}%"></span></span> ${f}%</td><td>${best}</td></tr>`;});
  document.getElementById('jobs').innerHTML=rows.join('')||'<tr><td colspan="6">no jobs yet</td></tr>';
}
document.getElementById('submit').addEventListener('submit',async e=>{
  e.preventDefault(); const err=document.getElementById('submit_error'); err.textContent='';
  let job; try{job=JSON.parse(document.getElementById('extra').value||'{}');}catch(x){err.textContent='More fields: '+x.message;return;}
  job.model=document.getElementById('model').value; job.dataset=document.getElementById('dataset').value;
  job.objective=document.getElementById('objective').value;
  job[document.getElementById('goal').value]=Number(document.getElementById('goal_value').value);
  const headers={'Content-Type':'application/json'}; const t=document.getElementById('token').value; if(t) headers['Authorization']='Bearer '+t;
  const r=await fetch('/v1/jobs',{method:'POST',headers,body:JSON.stringify(job)}); const b=await r.json();
  if(!r.ok){err.textContent=b.error?b.error.message:('HTTP '+r.status);return;}
  location.href='/jobs/'+b.id;
});
refresh(); setInterval(refresh,2000);
</script>
)";
  return o + kBottom;
}

std::string job_page(const json& detail) {
  const std::string id = std::to_string(detail.value("id", int64_t{0}));
  std::string o = top("Tula job " + id);
  o += "<h1>Job " + id + "</h1>\n<p><button id=\"cancel\">Cancel</button> <span class=\"error\" id=\"cancel_error\"></span> "
       "<a href=\"/v1/jobs/" + id + "\">JSON</a></p>\n<div id=\"live\">loading…</div>\n";
  o += "<script>\nconst jobId=" + id + R"(;
let pending=false, last=0;
async function redraw(){
  pending=false; last=Date.now();
  const r=await fetch('/jobs/'+jobId+'/fragment'); if(r.ok) document.getElementById('live').innerHTML=await r.text();
}
function soon(){ if(pending) return; pending=true; setTimeout(redraw, Math.max(0, 1500-(Date.now()-last))); }
const events=new EventSource('/v1/jobs/'+jobId+'/events');
for (const type of ['state','metrics','progress','replan']) events.addEventListener(type, soon);
events.addEventListener('end', ()=>{ events.close(); redraw(); });
document.getElementById('cancel').addEventListener('click', async ()=>{
  const r=await fetch('/v1/jobs/'+jobId+'/cancel',{method:'POST'});
  if(!r.ok){ const b=await r.json(); document.getElementById('cancel_error').textContent=b.error.message; }
  soon();
});
redraw();
</script>
)";
  return o + kBottom;
}

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
