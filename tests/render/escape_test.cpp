// One escaper for HTML and XML: the five characters markup gives a meaning
// to become entities, and the control characters XML forbids become spaces.
#include "render/escape.hpp"

#include <gtest/gtest.h>

#include "helpers/xml_check.hpp"

namespace tula::render {
namespace {

TEST(Escape, TurnsMarkupCharactersIntoEntities) {
  EXPECT_EQ(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(escape("plain text, 3.5 s"), "plain text, 3.5 s");
  EXPECT_EQ(escape(""), "");
}

TEST(Escape, KeepsUtf8AndWhitespaceButDropsControlCharacters) {
  EXPECT_EQ(escape("caf\xc3\xa9 \xc2\xb7 x"), "caf\xc3\xa9 \xc2\xb7 x");
  EXPECT_EQ(escape("a\tb\nc"), "a\tb\nc");
  EXPECT_EQ(escape(std::string("a\x01" "b\x1f" "c\0d", 7)), "a b c d");
}

TEST(Escape, EscapedTextParsesInAnElementAndAnAttribute) {
  const std::string name = "m<&\"'>\x02";
  const std::string doc = "<r a=\"" + escape(name) + "\" b='" + escape(name) + "'>" + escape(name) + "</r>";
  EXPECT_EQ(testing::xml_problem(doc), "");
}

// The check the tests above rely on does catch what an unescaped name does.
TEST(Escape, TheXmlCheckCatchesBrokenMarkup) {
  EXPECT_NE(testing::xml_problem("<r>a & b</r>"), "");
  EXPECT_NE(testing::xml_problem("<r a=\"x\"y\">b</r>"), "");
  EXPECT_NE(testing::xml_problem("<r><s></r></s>"), "");
  if (std::filesystem::exists("/usr/bin/python3")) {
    EXPECT_NE(testing::python_xml_problem("<r a='1' a='2'/>"), "");  // past the small checker
    EXPECT_EQ(testing::python_xml_problem("<?xml version=\"1.0\"?>\n<r a='1'>&#39;</r>"), "");
  }
}

}  // namespace
}  // namespace tula::render
