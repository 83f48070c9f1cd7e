// Request bodies read with limits: nesting refused while parsing (before
// anything deep is built), numbers a double cannot hold named by field, and
// values quoted back short and flat however deep they are.
#include "service/request_json.hpp"

#include <gtest/gtest.h>

#include "helpers/expect_error.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::service {
namespace {

using nlohmann::json;
using testing::error_message;
using testing::expect_error;

// `levels` arrays in one another around a 1, as text.
std::string nested_text(size_t levels) { return std::string(levels, '[') + "1" + std::string(levels, ']'); }

// The same as a value, built without recursion (nlohmann destroys it without any).
json nested_value(size_t levels) {
  json v = 1;
  for (size_t i = 0; i < levels; ++i) v = json::array({std::move(v)});
  return v;
}

TEST(RequestJson, SixtyFourLevelsAreReadAndSixtyFiveAreRefusedNamingTheLimit) {
  EXPECT_NO_THROW(parse_request_json(R"({"epochs": )" + nested_text(kMaxJsonDepth - 1) + "}"));
  expect_error<BadRequest>([] { (void)parse_request_json(R"({"epochs": )" + nested_text(kMaxJsonDepth) + "}"); },
                           {"deeper than 64 levels", "field 'epochs'"});
}

TEST(RequestJson, AHundredThousandLevelsAreRefusedWithoutBuildingThem) {
  // The probe's body: it used to reach the spec checks and crash the server.
  expect_error<BadRequest>([] { (void)parse_request_json(R"({"epochs": )" + nested_text(100000) + "}"); },
                           {"deeper than 64 levels"});
  expect_error<BadRequest>([] { (void)parse_request_json(std::string(100000, '[')); }, {"deeper than 64 levels"});
}

TEST(RequestJson, TheDeepestBodyTheApiTakesIsRead) {
  // POST /v1/plan carries a whole profile.
  const std::string profile = testing::read_text(std::string(TULA_SOURCE_DIR) + "/bench/results/profiles/resnet32.json");
  ASSERT_FALSE(profile.empty());
  EXPECT_TRUE(parse_request_json("{\"profile\": " + profile + "}")["profile"].is_object());
}

TEST(RequestJson, ANumberADoubleCannotHoldNamesItsField) {
  try {
    (void)parse_request_json(R"({"model": "small_cnn", "epochs": 1e400})");
    ADD_FAILURE() << "1e400 was read";
  } catch (const NumberOutOfRange& e) {
    EXPECT_EQ(e.field(), "epochs");
    EXPECT_NE(std::string(e.what()).find("field 'epochs'"), std::string::npos) << e.what();
  }
  EXPECT_NE(error_message<BadRequest>([] { (void)parse_request_json("-1e400"); }).find("the body"), std::string::npos);
}

TEST(RequestJson, MalformedJsonIsABadRequestWithAShortMessage) {
  const std::string m = error_message<BadRequest>([] { (void)parse_request_json("{\"a\": \"" + std::string(100000, 'x')); });
  EXPECT_NE(m.find("malformed JSON"), std::string::npos) << m;
  EXPECT_LT(m.size(), 400u);
}

TEST(RequestJson, ADeepValueIsQuotedShortAndFlat) {
  const std::string quoted = quote_json(nested_value(100000));
  EXPECT_EQ(quoted, "[[[...]]]");
  EXPECT_EQ(quote_json(json::parse(R"({"a": [1, {"b": {"c": 2}}], "d": "x"})")), R"({"a": [1, {...}], "d": "x"})");
  EXPECT_EQ(quote_json(json::array()), "[]");
  EXPECT_EQ(quote_json(1.5), "1.5");
}

TEST(RequestJson, LongValuesAreCutWithAMark) {
  const std::string quoted = quote_json(json(std::string(5000, 'x')), 60);
  EXPECT_LE(quoted.size(), 60u + 3);
  EXPECT_EQ(quoted.substr(quoted.size() - 3), "...");
  json wide = json::array();
  for (int i = 0; i < 10000; ++i) wide.push_back(i);
  EXPECT_LE(quote_json(wide, 60).size(), 63u);
  // Never inside a UTF-8 sequence: "é" is two bytes.
  EXPECT_EQ(quote_text("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9...");
}

TEST(RequestJson, AKeyGivenTwiceInOneObjectIsRefusedNamingIt) {
  // The last one used to win silently: a proxy reading the first would see epochs 1.
  expect_error<BadRequest>([] { (void)parse_request_json(R"({"epochs": 1, "epochs": 9999})"); },
                           {"field 'epochs' is given twice"});
  expect_error<BadRequest>([] { (void)parse_request_json(R"({"profile": {"a": 1, "b": {}, "a": 2}})"); },
                           {"field 'a' is given twice", "in field 'profile.a'"});
  // The same key in two objects is no duplicate.
  EXPECT_NO_THROW(parse_request_json(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})"));
}

TEST(RequestJson, ControlBytesAreEscapedInMessages) {
  // A NUL in a key used to end the message where it was read as a C string.
  const std::string m = error_message<BadRequest>(
      [] { (void)parse_request_json("{\"ep\\u0000och\\u001b[31m\": 1, \"ep\\u0000och\\u001b[31m\": 2}"); });
  EXPECT_NE(m.find("ep\\x00och\\x1b[31m"), std::string::npos) << m;
  EXPECT_NE(m.find("given twice"), std::string::npos) << m;
  EXPECT_EQ(m.find('\0'), std::string::npos);
  EXPECT_EQ(quote_text(std::string("a\0b\r\nc", 6)), "a\\x00b\\x0d\\x0ac");
}

}  // namespace
}  // namespace tula::service
