// The HTML pieces of the report pages: numbers for people and tables whose
// text is escaped.
#include "render/html.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "helpers/xml_check.hpp"

namespace tula::render::html {
namespace {

TEST(Html, FormatsNumbersForPeople) {
  EXPECT_EQ(money(0.0061, "USD"), "$0.0061");
  EXPECT_EQ(money(12.5, "EUR"), "12.50 EUR");
  EXPECT_EQ(money(-3, "USD"), "-$3.00");
  EXPECT_EQ(money(std::nullopt, "USD"), "not measured");
  EXPECT_EQ(signed_percent(-0.0062), "-0.6%");
  EXPECT_EQ(signed_percent(0.032), "+3.2%");
  EXPECT_EQ(seconds(std::nullopt, "none"), "none");
  EXPECT_EQ(seconds(90.0), "90 s");
  EXPECT_EQ(percent(0.853), "85.3%");
  EXPECT_EQ(number(1234.5678), "1235");
  EXPECT_EQ(number(std::nan("")), "not measured");  // a value that is not finite is not a measurement
}

TEST(Html, TablesEscapeTextAndKeepRawCells) {
  Table t({"name <h>", "value"}, "facts \"x\"");
  t.row({text("a <b> & 'c'"), num("1 < 2")}, "chosen");
  t.row({raw("<strong>bold</strong>"), text("")});
  EXPECT_EQ(t.rows(), 2u);
  const auto s = t.str();
  EXPECT_NE(s.find("<table class=\"facts &quot;x&quot;\">"), std::string::npos);
  EXPECT_NE(s.find("<th>name &lt;h&gt;</th>"), std::string::npos);
  EXPECT_NE(s.find("<tr class=\"chosen\"><td>a &lt;b&gt; &amp; &#39;c&#39;</td><td class=\"num\">1 &lt; 2</td></tr>"),
            std::string::npos);
  EXPECT_NE(s.find("<td><strong>bold</strong></td>"), std::string::npos);
  EXPECT_EQ(testing::xml_problem(s), "");
}

}  // namespace
}  // namespace tula::render::html
