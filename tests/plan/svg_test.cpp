// The plan figure (`tula plan --svg`): its three panels, the knee and the
// choice marked, and names from the profile and the catalog escaped so that
// the file always parses as XML.
#include "plan/svg.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "helpers/xml_check.hpp"
#include "plan/test_catalog.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::plan {
namespace {

Plan plan_for(const Objective& objective) {
  return Planner(test::make_profile({}, 77), catalog_from_json(test::catalog_json())).plan(objective);
}

TEST(PlanFigure, DrawsThePanelsTheKneeAndTheChoice) {
  const auto svg = render_svg(plan_for(Objective::fastest()));
  EXPECT_EQ(testing::xml_problem(svg), "");
  for (const char* title : {">Time vs global batch</text>", ">Cost vs global batch</text>",
                            ">Pareto front: cost vs time</text>"}) {
    EXPECT_NE(svg.find(title), std::string::npos) << title;
  }
  // The fastest configuration is not the knee: both are marked in each panel.
  EXPECT_EQ(testing::count_of(svg, ">knee</text>"), 3u);
  EXPECT_EQ(testing::count_of(svg, ">chosen</text>"), 3u);
  EXPECT_NE(svg.find(">Chosen (fastest): "), std::string::npos);
  EXPECT_NE(svg.find("global batch (samples per step) (log scale)"), std::string::npos);
  EXPECT_NE(svg.find("stroke-opacity:0.35"), std::string::npos);  // the front's intervals
}

TEST(PlanFigure, NamesWithMarkupCharactersAreEscaped) {
  const std::string odd = "<&\"'>";
  auto plan = plan_for(Objective::knee());
  plan.model = "model" + odd;
  plan.dataset = "data" + odd;
  for (auto& m : plan.machines) m.spec.name = "machine" + odd;
  plan.notes.limit = "limit" + odd;
  const auto svg = render_svg(plan);
  EXPECT_EQ(testing::xml_problem(svg), "");
  EXPECT_EQ(svg.find(odd), std::string::npos);
  const std::string escaped = "&lt;&amp;&quot;&#39;&gt;";
  for (const char* name : {"model", "data", "machine", "limit"}) {
    EXPECT_NE(svg.find(name + escaped), std::string::npos) << name;
  }
}

TEST(PlanFigure, AnEmptyPlanIsRefused) { EXPECT_THROW(render_svg(Plan{}), std::invalid_argument); }

}  // namespace
}  // namespace tula::plan
