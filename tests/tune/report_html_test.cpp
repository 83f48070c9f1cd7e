#include "tune/report_html.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "helpers/xml_check.hpp"
#include "plan/catalog.hpp"
#include "plan/planner.hpp"
#include "plan/report.hpp"
#include "plan/test_catalog.hpp"
#include "predict/synthetic_profile.hpp"
#include "records/record_error.hpp"
#include "records/tune_report.hpp"
#include "render/escape.hpp"

namespace tula::tune {
namespace {

using nlohmann::json;

json plan_json(const plan::Objective& objective) {
  plan::Planner planner(test::make_profile({}, 77), plan::catalog_from_json(test::catalog_json()));
  return plan::to_json(planner.plan(objective));
}

const json& knee_plan() {
  static const json j = plan_json(plan::Objective::knee());
  return j;
}

json config_of(const json& candidate) {
  json c;
  for (const char* k :
       {"machine", "nodes", "workers_per_node", "batch_per_worker", "accumulation_steps", "global_batch"}) {
    c[k] = candidate[k];
  }
  return c;
}

// A job that planned the knee, ran slower than planned, resized once at a
// third of the way (twice the nodes and the batch), declined a second
// re-plan, and reached its target a little after the plan said.
json sample_report(const json& plan) {
  const double P = plan["chosen"]["time_s"]["estimate"].get<double>();
  const double iter = plan["knee"]["iteration_s"].get<double>();
  const json a = config_of(plan["knee"]);
  json b = a;
  b["nodes"] = a["nodes"].get<int64_t>() * 2;
  b["global_batch"] = a["global_batch"].get<int64_t>() * 2;
  const double profile = 0.03 * P, pilot = 0.06 * P, s1 = 0.10 * P, e1 = 0.35 * P, s2 = 0.37 * P;
  const double total = 1.04 * P, price = 0.40;
  const auto steps = static_cast<int64_t>(std::lround(1.02 * plan["chosen"]["steps"]["estimate"].get<double>()));
  const int64_t steps1 = steps * 3 / 10;
  const double epochs = plan["chosen"]["epochs"]["estimate"].get<double>() * 1.02;

  json timeline = json::array(), evaluations = json::array();
  for (int i = 1; i <= 60; ++i) {
    const double u = i / 60.0;
    const bool first = u < 0.3;
    const double t = first ? s1 + (e1 - s1) * u / 0.3 : s2 + (total - s2) * (u - 0.3) / 0.7;
    const int64_t step = first ? static_cast<int64_t>(steps1 * u / 0.3)
                               : steps1 + static_cast<int64_t>((steps - steps1) * (u - 0.3) / 0.7);
    const double predicted_total = total * (1 + 0.12 * std::exp(-4 * u) * std::cos(7 * u));
    json w = {{"t_s", t},
              {"step", step},
              {"epoch", epochs * static_cast<double>(step) / static_cast<double>(steps)},
              {"global_batch", first ? a["global_batch"] : b["global_batch"]},
              {"workers", (first ? a : b)["nodes"].get<int64_t>() * a["workers_per_node"].get<int64_t>()},
              {"iteration_s", iter * (first ? 1.32 : 1.05) * (1 + 0.03 * std::sin(9 * i))},
              {"iteration_s_predicted", iter * (first ? 1.0 : 1.02)},
              {"b_noise", 600 + 900 * u},
              {"predicted_total_s", predicted_total},
              {"predicted_remaining_s", std::max(0.0, predicted_total - t)},
              {"predicted_remaining_range_s",
               {0.8 * std::max(0.0, predicted_total - t), 1.3 * std::max(0.0, predicted_total - t)}},
              {"cost_so_far", price * t / 3600},
              {"test_accuracy", nullptr}};
    if (i % 10 == 0) {
      const double acc = 0.853 - 0.25 * std::exp(-3.5 * u);
      w["test_accuracy"] = acc;
      evaluations.push_back(
          {{"t_s", t}, {"step", step}, {"epoch", w["epoch"]}, {"test_accuracy", acc}, {"test_loss", 1 - acc}});
    }
    timeline.push_back(w);
  }
  json remaining = json::array();
  for (double fr : {0.25, 0.5, 0.75}) {
    const double t = s1 + fr * (total - s1), pred = (total - t) * (1 + 0.08 * (1 - fr)), meas = total - t;
    remaining.push_back({{"fraction", fr},
                         {"t_s", t},
                         {"predicted_remaining_s", pred},
                         {"measured_remaining_s", meas},
                         {"error", (pred - meas) / meas},
                         {"predicted_range_s", {(fr == 0.5 ? 1.0 : 0.9) * pred, 1.2 * pred}}});
  }
  return {{"format", "tula-tune-report"},
          {"version", 1},
          {"job",
           {{"model", "small_cnn <script>alert(1)</script>"},
            {"dataset", "fashion-mnist"},
            {"objective", "knee"},
            {"objective_text", "the knee of the time/cost front"},
            {"resources", "catalog \"test\" & friends"},
            {"backend", "local"},
            {"optimizer", "ags"},
            {"target_accuracy", 0.85},
            {"epochs", nullptr},
            {"out_dir", "/tmp/jobs/<odd> & dir"},
            {"started", "2026-11-23T10:00:00Z"},
            {"finished", "2026-11-23T10:05:00Z"}}},
          {"state", "succeeded"},
          {"reason", "test accuracy 85.3% reached the target 85.0% at step " + std::to_string(steps)},
          {"price", {{"currency", "USD"}, {"per_hour", price}, {"basis", "per node-hour of the machine type"}}},
          {"plan", plan},
          {"chosen", a},
          {"phases",
           {{"profile_s", profile},
            {"pilot_s", pilot},
            {"train_s", (e1 - s1) + (total - s2)},
            {"restart_s", s2 - e1},
            {"total_s", total},
            {"profiling_share", (profile + pilot) / total}}},
          {"predicted", {{"time_s", P}, {"cost", plan["chosen"]["cost"]["estimate"]}, {"at", "plan"}}},
          {"measured",
           {{"time_s", total},
            {"cost", 1.04 * plan["chosen"]["cost"]["estimate"].get<double>()},
            {"final_accuracy", 0.853},
            {"steps", steps},
            {"epochs", epochs}}},
          {"timeline", timeline},
          {"evaluations", evaluations},
          {"replans",
           {{{"t_s", e1},
             {"step", steps1},
             {"from", a},
             {"to", b},
             {"reason", "measured iteration time 32% above the plan; the knee moved"},
             {"predicted_saving_s", 0.12 * P},
             {"restart_cost_s", s2 - e1},
             {"applied", true},
             {"numbers", {{"b_noise", 900.0}, {"compute_scale", 1.32}}}},
            {{"t_s", 0.7 * P},
             {"step", steps * 7 / 10},
             {"from", b},
             {"to", a},
             {"reason", "a smaller batch would save 2 s < the restart's 4 s"},
             {"predicted_saving_s", 2.0},
             {"restart_cost_s", 4.0},
             {"applied", false},
             {"numbers", nullptr}}}},
          {"segments",
           {{{"start_t_s", s1},
             {"end_t_s", e1},
             {"config", a},
             {"first_step", 0},
             {"last_step", steps1},
             {"exit", "stopped for resize"}},
            {{"start_t_s", s2},
             {"end_t_s", total},
             {"config", b},
             {"first_step", steps1},
             {"last_step", steps},
             {"exit", "reached the target"}}}},
          {"remaining_error", remaining},
          {"notes",
           {"the profile came from the cache (same model & machine)", "pilot runs: 2 at global batch 256 <fast>"}}};
}

// A job that failed while profiling: no plan, no timeline, nothing measured.
json failed_report() {
  return {{"format", "tula-tune-report"},
          {"version", 1},
          {"job",
           {{"model", "resnet20"},
            {"dataset", "cifar10"},
            {"objective", "knee"},
            {"resources", "local"},
            {"backend", "local"},
            {"optimizer", "sgd"},
            {"target_accuracy", nullptr},
            {"epochs", 5},
            {"out_dir", "/tmp/jobs/2"},
            {"started", "2026-11-23T10:00:00Z"},
            {"finished", nullptr}}},
          {"state", "failed"},
          {"reason", "profiling failed: the data set cifar10 was not found under ./data"},
          {"price", nullptr},
          {"plan", nullptr},
          {"chosen", nullptr},
          {"phases",
           {{"profile_s", 3.2},
            {"pilot_s", nullptr},
            {"train_s", nullptr},
            {"restart_s", nullptr},
            {"total_s", 3.4},
            {"profiling_share", nullptr}}},
          {"predicted", nullptr},
          {"measured",
           {{"time_s", 3.4}, {"cost", nullptr}, {"final_accuracy", nullptr}, {"steps", nullptr}, {"epochs", nullptr}}},
          {"timeline", json::array()},
          {"evaluations", json::array()},
          {"replans", json::array()},
          {"segments", json::array()},
          {"remaining_error", json::array()},
          {"notes", json::array()}};
}

using testing::count_of;
using testing::well_formed;

// The page of a report given as report.json's JSON, read the way every reader reads it.
std::string page_of(const json& report) { return render_report_html(records::tune_report_from_json(report)); }

// The page with the one URL it may hold (the SVG namespace) taken out.
std::string without_svg_namespace(std::string page) {
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (size_t i = page.find(ns); i != std::string::npos; i = page.find(ns, i)) page.erase(i, ns.size());
  return page;
}

void expect_self_contained(const std::string& page) {
  EXPECT_EQ(well_formed(page), "");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count_of(page, "<html"), 1u);
  EXPECT_EQ(count_of(page, "</html>"), 1u);
  EXPECT_EQ(count_of(page, "<svg"), count_of(page, "</svg>"));
  EXPECT_EQ(count_of(page, "<svg"), count_of(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  const std::string rest = without_svg_namespace(page);
  for (const char* banned : {"http://", "https://", "<script", "<link", "<img", "<iframe", "src=", "url(", "@import"}) {
    EXPECT_EQ(rest.find(banned), std::string::npos) << banned;
  }
}

// xmllint, where the machine has it: the page parses as XML, and its HTML
// parser finds nothing wrong but the SVG elements it does not know.
void check_with_xmllint(const std::string& page, const std::string& name) {
  if (!std::filesystem::exists("/usr/bin/xmllint")) return;
  const auto path = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".html");
  std::ofstream(path) << page;
  EXPECT_EQ(std::system(("/usr/bin/xmllint --noout " + path.string() + " 2>&1").c_str()), 0);
  const std::string cmd = "/usr/bin/xmllint --html --noout " + path.string() +
                          " 2>&1 | grep -E 'parser (error|warning)' | grep -v 'Tag [a-z]* invalid'";
  // grep exits 1 when it prints nothing: no error but the unknown SVG tags.
  EXPECT_NE(std::system(cmd.c_str()), 0) << "xmllint --html found errors in " << path;
  std::filesystem::remove(path);
}

TEST(ReportHtml, IsOneSelfContainedWellFormedPage) {
  const auto page = page_of(sample_report(knee_plan()));
  expect_self_contained(page);
  check_with_xmllint(page, "tula-report");
  // Every section, and a chart in each that has one.
  for (const char* id :
       {"id=\"bill\"", "id=\"choice\"", "id=\"run\"", "id=\"replans\"", "id=\"remaining\"", "id=\"notes\""}) {
    EXPECT_NE(page.find(id), std::string::npos) << id;
  }
  EXPECT_GE(count_of(page, "<svg"), 7u);  // phases, front, total, remaining, iteration, accuracy, noise
  for (const char* title : {"Predicted total time, from each watch point", "Remaining time: predicted and measured",
                            "Iteration time", "Test accuracy", "Gradient noise scale", "Where the time went"}) {
    EXPECT_NE(page.find(title), std::string::npos) << title;
  }
  EXPECT_NE(page.find("target 85%"), std::string::npos);

  if (const char* out = std::getenv("TULA_REPORT_SAMPLE")) std::ofstream(out) << page;
}

// A job that read its curve on a validation split says so, judges the
// target there, and shows the test split's one reading beside it, unjudged.
TEST(ReportHtml, AValidationCurveIsNamedAndTheFinalTestStandsApart) {
  auto r = sample_report(knee_plan());
  r["measured"]["evaluated_on"] = "validation";
  r["measured"]["best_accuracy"] = 0.861;
  const auto page = page_of(r);
  for (const char* text : {"85% validation accuracy (the test split read once, at the end)", "Validation accuracy",
                           "Best validation accuracy", "86.1%", "Final test accuracy", "85.3%"}) {
    EXPECT_NE(page.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(page.find("Test accuracy at each evaluation"), std::string::npos);
  expect_self_contained(page);
}

TEST(ReportHtml, ShowsTheBill) {
  const auto r = sample_report(knee_plan());
  const auto page = page_of(r);
  EXPECT_NE(page.find("Total time"), std::string::npos);
  EXPECT_GE(count_of(page, ">-3.8%</td>"), 2u) << "time and cost: (P - 1.04 P) / 1.04 P";
  EXPECT_NE(page.find("85.3%"), std::string::npos);
  EXPECT_NE(page.find("target reached"), std::string::npos);
  EXPECT_NE(page.find("profiling share"), std::string::npos);
  EXPECT_NE(page.find("8.65%"), std::string::npos) << "0.09 / 1.04 of the job";
}

TEST(ReportHtml, AStoppedJobsBillGivesNoErrorForThePartItRan) {
  auto r = sample_report(knee_plan());
  r["state"] = "stopped";
  const auto page = page_of(r);
  EXPECT_NE(page.find("measured so far"), std::string::npos);
  EXPECT_GE(count_of(page, "not run to its end"), 4u) << "time, cost, steps and epochs";
  EXPECT_EQ(count_of(page, ">-3.8%</td>"), 0u) << "the error of a whole job's prediction against a part of it";
}

// After the pilot a move to the plan's choice can be declined (it did not
// pay for its restart): the page says where the job started and why, and
// shows no interval of the plan's choice as the job's.
TEST(ReportHtml, AMoveDeclinedAfterThePilotIsSaidAndThePlansIntervalsAreNotTheJobs) {
  const auto as_planned = sample_report(knee_plan());
  auto declined = as_planned;
  declined["chosen"]["batch_per_worker"] = as_planned["chosen"]["batch_per_worker"].get<int64_t>() * 2;
  declined["chosen"]["global_batch"] = as_planned["chosen"]["global_batch"].get<int64_t>() * 2;
  const auto page = page_of(declined), planned_page = page_of(as_planned);
  const std::string said = "the job stayed where the pilot&#39;s workers ran";
  EXPECT_NE(page.find(said), std::string::npos);
  EXPECT_EQ(planned_page.find(said), std::string::npos);
  // Time, cost, steps and epochs: no interval; steps and epochs: no prediction.
  EXPECT_EQ(count_of(page, ">none</td>"), count_of(planned_page, ">none</td>") + 6);
  expect_self_contained(page);
}

TEST(ReportHtml, DrawsTheFrontWithTheKneeAndTheChoice) {
  const auto plan = knee_plan();
  const auto page = page_of(sample_report(plan));
  // The knee plan chose the knee: one label says both.
  EXPECT_NE(page.find(">knee (chosen)</text>"), std::string::npos);
  EXPECT_NE(page.find(">measured</text>"), std::string::npos);
  // The cloud: one faint dot per configuration the plan carries.
  EXPECT_GE(count_of(page, "fill-opacity:0.35"), plan["candidates"]["rows"].size() / 2);
  EXPECT_NE(page.find(render::escape(plan["explanation"].get<std::string>().substr(0, 40))), std::string::npos);
  EXPECT_NE(page.find("Assumptions"), std::string::npos);

  // A plan whose choice is not the knee labels both.
  const auto fastest = page_of(sample_report(plan_json(plan::Objective::fastest())));
  expect_self_contained(fastest);
  EXPECT_NE(fastest.find(">knee</text>"), std::string::npos);
  EXPECT_NE(fastest.find(">chosen</text>"), std::string::npos);
}

TEST(ReportHtml, ListsTheReplansAndMarksTheResize) {
  const auto r = sample_report(knee_plan());
  const auto page = page_of(r);
  EXPECT_NE(page.find("measured iteration time 32% above the plan; the knee moved"), std::string::npos);
  EXPECT_NE(page.find("a smaller batch would save 2 s &lt; the restart&#39;s 4 s"), std::string::npos);
  EXPECT_NE(page.find(">applied</td>"), std::string::npos);
  EXPECT_NE(page.find(">not applied</td>"), std::string::npos);
  const auto& to = r["replans"][0]["to"];
  const std::string compact = std::to_string(to["nodes"].get<int64_t>()) + " x " + to["machine"].get<std::string>() +
                              " x " + std::to_string(to["workers_per_node"].get<int64_t>()) + " workers, batch " +
                              std::to_string(to["batch_per_worker"].get<int64_t>()) + " (global " +
                              std::to_string(to["global_batch"].get<int64_t>()) + ")";
  EXPECT_GE(count_of(page, compact), 2u) << compact;  // the re-plan's target, and the second segment
  EXPECT_NE(page.find("compute_scale 1.32"), std::string::npos);
  // One resize marker on each of the five timeline charts; the declined re-plan has none.
  const std::string resize = ">resize to B=" + std::to_string(r["replans"][0]["to"]["global_batch"].get<int64_t>());
  EXPECT_EQ(count_of(page, resize), 5u);
  EXPECT_EQ(count_of(page, ">no training ran (profile, pilots, restarts)</text>"), 5u);
  // The segments and the remaining-time error.
  EXPECT_NE(page.find("stopped for resize"), std::string::npos);
  EXPECT_NE(page.find("Mean absolute error"), std::string::npos);
  // The time left's range: on the chart, and in the table whether the time
  // that was left fell in it (predicted 6%, 4% and 2% over it; the range from
  // 0.9x the prediction, at 50% from the prediction itself: outside there).
  EXPECT_NE(page.find("its 80% range, low end"), std::string::npos);
  EXPECT_NE(page.find("its 80% range, high end"), std::string::npos);
  EXPECT_EQ(count_of(page, " (within)"), 2u);
  EXPECT_EQ(count_of(page, " (outside)"), 1u);
}

TEST(ReportHtml, SaysWhereTheTargetWasJudgedOutOfReachAndWhetherTheJobStopped) {
  auto r = sample_report(knee_plan());
  r["give_up"] = {{"t_s", 300.0}, {"step", 4200}, {"epoch", 6.5}, {"best_accuracy", 0.853},
                  {"reason", "the target 95.0% is out of reach within --max-epochs 30: <flat>"}, {"acted", false}};
  const auto page = page_of(r);
  EXPECT_NE(page.find("Target judged out of reach at"), std::string::npos);
  EXPECT_NE(page.find("step 4200, epoch 6.5, best 85.3%"), std::string::npos) << page;
  EXPECT_NE(page.find("&lt;flat&gt;"), std::string::npos);
  EXPECT_NE(page.find("the job went on"), std::string::npos);
  r["give_up"]["acted"] = true;
  EXPECT_NE(page_of(r).find("The job stopped there."), std::string::npos);
}

TEST(ReportHtml, EscapesEveryStringFromTheReport) {
  const auto page = page_of(sample_report(knee_plan()));
  EXPECT_EQ(page.find("<script>alert(1)</script>"), std::string::npos);
  EXPECT_NE(page.find("small_cnn &lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("catalog &quot;test&quot; &amp; friends"), std::string::npos);
  EXPECT_NE(page.find("/tmp/jobs/&lt;odd&gt; &amp; dir"), std::string::npos);
  EXPECT_NE(page.find("256 &lt;fast&gt;"), std::string::npos);
}

TEST(ReportHtml, AFailedJobStillGetsAUsefulPage) {
  const auto page = page_of(failed_report());
  expect_self_contained(page);
  check_with_xmllint(page, "tula-report-failed");
  EXPECT_NE(page.find("state-failed"), std::string::npos);
  EXPECT_NE(page.find("profiling failed: the data set cifar10 was not found under ./data"), std::string::npos);
  EXPECT_NE(page.find("No plan"), std::string::npos);
  EXPECT_NE(page.find("5 epochs"), std::string::npos);
  EXPECT_NE(page.find("not measured"), std::string::npos);
  EXPECT_NE(page.find("No watch point was recorded"), std::string::npos);
  EXPECT_NE(page.find("no training ran to re-plan"), std::string::npos);
  EXPECT_EQ(page.find("could not be drawn"), std::string::npos);

  if (const char* out = std::getenv("TULA_REPORT_SAMPLE_FAILED")) std::ofstream(out) << page;
}

// A report.json whose fields have the wrong types is refused by its reader,
// naming the field; the page never sees it.
TEST(ReportHtml, AMistypedReportIsRefusedNamingTheField) {
  const auto expect_refused = [](const json& j, const std::string& field) {
    try {
      records::tune_report_from_json(j);
      ADD_FAILURE() << "accepted " << j.dump().substr(0, 80);
    } catch (const records::RecordError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  const json good = sample_report(knee_plan());
  auto odd = good;
  odd["timeline"][3]["t_s"] = "soon";
  expect_refused(odd, "timeline");
  odd = good;
  odd["measured"]["time_s"] = "fast";
  expect_refused(odd, "measured");
  odd = good;
  odd["replans"][0]["to"] = 7;
  expect_refused(odd, "replans");
  odd = good;
  odd["notes"] = "one note, not a list";
  expect_refused(odd, "notes");
  odd = good;
  odd["version"] = 2;
  expect_refused(odd, "version");
  for (const json& not_a_report : {json(), json::array({1, 2}), json::object(), json{{"state", 3}}}) {
    expect_refused(not_a_report, "tula tune report");
  }
}

// A record with nothing in it, or only the parts a young job has, still
// renders; the plan's part stays the planner's JSON and is read defensively.
TEST(ReportHtml, AReportWithEmptyOrOddPartsRenders) {
  std::vector<records::TuneReport> reports(2);
  reports[1] = records::tune_report_from_json(json{{"format", "tula-tune-report"}, {"version", 1}});
  auto odd = sample_report(knee_plan());
  odd["timeline"][4] = nullptr;  // a watch point with nothing in it
  odd["plan"]["front"][0]["marks"] = "knee";
  odd["plan"]["candidates"]["rows"][0] = json::array({1});
  odd["plan"]["front"][1]["time_s"] = "slow";
  reports.push_back(records::tune_report_from_json(odd));
  for (const auto& r : reports) {
    std::string page;
    ASSERT_NO_THROW(page = render_report_html(r));
    expect_self_contained(page);
    EXPECT_EQ(page.find("could not be drawn"), std::string::npos);
  }
  EXPECT_NE(render_report_html(reports[0]).find("unknown model on unknown data set"), std::string::npos);
}

// Names from the report (model, data set, machine) holding every markup
// character: escaped wherever they appear, so the page still parses as XML.
TEST(ReportHtml, NamesWithMarkupCharactersAreEscapedEverywhere) {
  const std::string odd = "<&\"'>";
  auto j = sample_report(knee_plan());
  j["job"]["model"] = "model" + odd;
  j["job"]["dataset"] = "data" + odd;
  j["chosen"]["machine"] = "machine" + odd;
  j["replans"][0]["to"]["machine"] = "machine" + odd;
  j["segments"][1]["config"]["machine"] = "machine" + odd;
  j["plan"]["front"][0]["machine"] = "machine" + odd;
  const auto page = page_of(j);
  EXPECT_EQ(testing::xml_problem(page), "");
  EXPECT_EQ(page.find(odd), std::string::npos);
  const std::string escaped = "&lt;&amp;&quot;&#39;&gt;";
  for (const char* name : {"model", "data", "machine"}) {
    EXPECT_GE(count_of(page, name + escaped), 1u) << name;
  }
}

TEST(ReportHtml, StaysSmallForALongRun) {
  auto r = sample_report(knee_plan());
  json timeline = json::array();
  for (int i = 0; i < 50000; ++i) {
    json w = r["timeline"][i % 60];
    w["t_s"] = 5.0 + 0.001 * i;
    timeline.push_back(w);
  }
  r["timeline"] = timeline;
  const auto page = page_of(r);
  expect_self_contained(page);
  EXPECT_LT(page.size(), 2000000u);  // lines are thinned to 1500 points each
}

}  // namespace
}  // namespace tula::tune
