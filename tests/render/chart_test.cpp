// Charts, figures and the phase bar: well-formed XML whatever the names in
// them, nothing fetched from outside, and the parts that are asked for.
#include "render/chart.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "helpers/xml_check.hpp"
#include "render/phase_bar.hpp"

namespace tula::render {
namespace {

using testing::count_of;
using testing::xml_problem;

const std::string kOdd = "a <b> & \"c\" 'd'";

// Everything a chart can hold, every label holding markup characters.
Chart full_chart() {
  Chart c;
  c.title = "title " + kOdd;
  c.x = {"x " + kOdd, Unit::Seconds};
  c.y = {"y " + kOdd, Unit::Money, "EUR"};
  c.series.push_back({"line " + kOdd, {{1, 1}, {2, 3}, {3, 2}, {4, 5}}, "#1f77b4", Style::LineDots, {2.5}});
  c.series.push_back({"cloud " + kOdd, {{1, 2}, {2, 2}, {3, 4}}, "#999999", Style::Faint});
  c.series.push_back({"step " + kOdd, {{1, 4}, {3, 1}}, "#555555", Style::Step});
  c.hlines.push_back({4.5, "rule " + kOdd});
  c.hlines.push_back({1.5, "end label " + kOdd, "#2ca02c", false, false});
  c.vlines.push_back({2.5, "resize " + kOdd, "#ff7f0e", false});
  c.bands.push_back({0.5, 1.5, "band " + kOdd});
  c.band_legend = "bands " + kOdd;
  c.intervals.push_back({{1.5, 3}, {2.5, 3}});
  c.markers.push_back({2, 3, Shape::Ring, "knee " + kOdd});
  c.markers.push_back({3, 2, Shape::Diamond, "chosen " + kOdd, "#111111", true});
  c.markers.push_back({4, 5, Shape::Star, "star " + kOdd});
  c.markers.push_back({1, 1, Shape::Square, "square " + kOdd});
  return c;
}

// No URL but the SVG namespace, no script, no font, no image.
void expect_self_contained(std::string svg) {
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  EXPECT_EQ(count_of(svg, "<svg"), count_of(svg, ns));
  for (size_t i = svg.find(ns); i != std::string::npos; i = svg.find(ns, i)) svg.erase(i, ns.size());
  for (const char* banned : {"http://", "https://", "<script", "<image", "href", "url(", "@import", "@font-face"}) {
    EXPECT_EQ(svg.find(banned), std::string::npos) << banned;
  }
}

TEST(Chart, EveryPartIsDrawnAndTheResultParsesAsXml) {
  const auto svg = chart_svg(full_chart());
  EXPECT_EQ(xml_problem(svg), "");
  expect_self_contained(svg);
  EXPECT_EQ(svg.find(kOdd), std::string::npos) << "a label went out unescaped";
  const std::string escaped = "a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39;";
  for (const char* label : {"<title>title ", ">line ", ">cloud ", ">rule ", ">end label ", ">resize ", ">band ", ">bands ",
                            ">knee ", ">chosen ", ">star ", ">square "}) {
    EXPECT_NE(svg.find(label + escaped), std::string::npos) << label;
  }
  EXPECT_EQ(count_of(svg, "<polyline"), 3u);  // the line in two runs (broken at 2.5), the step
  EXPECT_EQ(count_of(svg, "fill-opacity:0.35"), 3u);  // the cloud
  EXPECT_NE(svg.find("stroke-opacity:0.35"), std::string::npos);  // the interval
}

TEST(Chart, ANameWithMarkupCharactersInEveryLabelParses) {
  Chart c = full_chart();
  c.empty_text = kOdd;
  c.series.clear();
  c.markers.clear();
  EXPECT_EQ(xml_problem(chart_svg(c)), "");
}

TEST(Chart, WithNoPointsShowsItsEmptyText) {
  Chart c;
  c.title = "nothing yet";
  c.empty_text = "nothing <here>";
  const auto empty = chart_svg(c);
  EXPECT_NE(empty.find(">nothing &lt;here&gt;</text>"), std::string::npos);
  EXPECT_EQ(xml_problem(empty), "");
  // Points that are not finite are no points either.
  c.series.push_back({"nan", {{std::nan(""), 1}, {1, HUGE_VAL}}});
  EXPECT_NE(chart_svg(c).find(">nothing &lt;here&gt;</text>"), std::string::npos);
}

TEST(Chart, LogScaleOnlyWhereTheDataSpanMoreThanTwentyTimes) {
  Chart c;
  c.x = {"x"};
  c.y = {"time", Unit::Seconds};
  c.series.push_back({"wide", {{1, 1}, {2, 100}, {3, 1000}}});
  EXPECT_NE(chart_svg(c).find("time (log scale)"), std::string::npos);
  EXPECT_EQ(chart_svg(c).find("x (log scale)"), std::string::npos);
  c.series[0].points = {{1, 10}, {2, 150}};
  EXPECT_EQ(chart_svg(c).find("(log scale)"), std::string::npos);
}

TEST(Chart, ThinsLongSeries) {
  Chart c;
  Series s{"", {}, "#1f77b4", Style::LineDots};  // no legend entry, whose swatch has a dot
  for (int i = 0; i < 100000; ++i) s.points.push_back({i, std::sin(i * 1e-3)});
  c.series.push_back(s);
  const auto svg = chart_svg(c);
  EXPECT_LT(svg.size(), 100000u);
  EXPECT_EQ(count_of(svg, "<circle"), 0u);  // dots are left out past 150 points
}

TEST(Figure, PanelsSideBySideInOneStandaloneDocument) {
  Figure f;
  f.title = "model " + kOdd + " on data " + kOdd;
  Chart a = full_chart(), b = full_chart();
  a.width = b.width = 450;
  b.series.resize(1);  // a shorter legend: the plot areas still line up
  f.panels = {a, b};
  f.notes = {"note " + kOdd};
  const auto svg = render::figure_svg(f);
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0), 0u);
  EXPECT_EQ(xml_problem(svg), "");
  expect_self_contained(svg);
  EXPECT_EQ(count_of(svg, "<svg"), 1u);
  EXPECT_EQ(count_of(svg, "<g transform=\"translate("), 2u);
  EXPECT_NE(svg.find("width=\"900.0\""), std::string::npos);
  EXPECT_NE(svg.find(">note a &lt;b&gt;"), std::string::npos);
  EXPECT_EQ(svg.find(kOdd), std::string::npos);
}

TEST(PhaseBar, ShowsEachPartsShareAndSaysWhenNothingWasTimed) {
  const auto bar = phase_bar_svg({{"profile <p>", 30, "#8c564b"}, {"training", 90, "#1f77b4"}, {"none", 0, "#000"}});
  EXPECT_EQ(xml_problem(bar), "");
  EXPECT_NE(bar.find(">profile &lt;p&gt; 30 s (25.0%)</text>"), std::string::npos);
  EXPECT_NE(bar.find(">training 90 s (75.0%)</text>"), std::string::npos);
  EXPECT_EQ(bar.find(">none "), std::string::npos);
  const auto empty = phase_bar_svg({});
  EXPECT_NE(empty.find("no phase was timed"), std::string::npos);
  EXPECT_EQ(xml_problem(empty), "");
}

}  // namespace
}  // namespace tula::render
