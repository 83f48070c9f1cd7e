// The `tula analyze` figure: its two panels, and the model's and data set's
// names escaped so that the file always parses as XML. Needs no training:
// it draws a result built here.
#include <gtest/gtest.h>

#include "helpers/xml_check.hpp"
#include "train/analysis.hpp"

namespace tula::train {
namespace {

AnalysisResult result_named(const std::string& model, const std::string& dataset) {
  AnalysisResult r;
  r.model = model;
  r.dataset = dataset;
  for (int64_t step = 1; step <= 40; ++step) r.gradient_norms.emplace_back(step, 2.0 / static_cast<double>(step));
  for (int64_t step : {10, 20, 40}) {
    HessianEstimate h;
    h.step = step;
    h.eigenvalue = 50.0 / static_cast<double>(step);
    h.gradient_norm = 1.0 / static_cast<double>(step);
    r.hessian.push_back(h);
  }
  return r;
}

TEST(AnalysisFigure, DrawsBothPanels) {
  const auto svg = render_analysis_svg(result_named("small_cnn", "fashion-mnist"));
  EXPECT_EQ(testing::xml_problem(svg), "");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find(">small_cnn on fashion-mnist</text>"), std::string::npos);
  EXPECT_NE(svg.find(">gradient norm</text>"), std::string::npos);
  EXPECT_NE(svg.find(">largest Hessian eigenvalue</text>"), std::string::npos);
  EXPECT_EQ(testing::count_of(svg, "<polyline"), 2u);
}

TEST(AnalysisFigure, NamesWithMarkupCharactersAreEscaped) {
  const std::string odd = "<&\"'>";
  const auto svg = render_analysis_svg(result_named("model" + odd, "data" + odd));
  EXPECT_EQ(testing::xml_problem(svg), "");
  EXPECT_EQ(svg.find(odd), std::string::npos);
  EXPECT_NE(svg.find("model&lt;&amp;&quot;&#39;&gt; on data&lt;&amp;&quot;&#39;&gt;"), std::string::npos);
}

TEST(AnalysisFigure, APanelWithoutDataSaysSo) {
  AnalysisResult r;
  r.model = "m";
  r.dataset = "d";
  const auto svg = render_analysis_svg(r);
  EXPECT_EQ(testing::xml_problem(svg), "");
  EXPECT_EQ(testing::count_of(svg, ">no data</text>"), 2u);
}

}  // namespace
}  // namespace tula::train
