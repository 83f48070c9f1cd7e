#include "predict/json_fields.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "predict/error.hpp"

namespace tula::predict::json_fields {
namespace {

// A plan as a newer or older planner might write it: some fields missing,
// some of another type.
const json kPlan = json::parse(R"({
  "epochs": 12.5,
  "currency": "EUR",
  "nodes": 4,
  "to_target": false,
  "front": [{"time_s": 10}],
  "chosen": {"time_s": 3},
  "explanation": null,
  "limit": ["not", "a", "string"],
  "cost": "cheap"
})");

TEST(ForgivingRead, PresentFieldsReadAsTheyAre) {
  EXPECT_EQ(forgiving::number(kPlan, "epochs"), 12.5);
  EXPECT_EQ(forgiving::string(kPlan, "currency"), "EUR");
  EXPECT_EQ(forgiving::boolean(kPlan, "to_target"), false);
  EXPECT_EQ(forgiving::array(kPlan, "front").size(), 1u);
  EXPECT_EQ(forgiving::number(forgiving::object(kPlan, "chosen"), "time_s"), 3.0);
  EXPECT_EQ(forgiving::at(kPlan, "nodes"), json(4));
}

TEST(ForgivingRead, MissingFieldsAreAbsentAndTheCallerPicksTheFallback) {
  EXPECT_EQ(forgiving::number(kPlan, "planning_seconds"), std::nullopt);
  EXPECT_EQ(forgiving::string(kPlan, "knee"), std::nullopt);
  EXPECT_EQ(forgiving::boolean(kPlan, "knee_detected").value_or(true), true);
  EXPECT_EQ(forgiving::text(kPlan, "machine", "unknown"), "unknown");
  EXPECT_TRUE(forgiving::array(kPlan, "skipped").is_array());
  EXPECT_TRUE(forgiving::array(kPlan, "skipped").empty());
  EXPECT_TRUE(forgiving::object(kPlan, "knee").is_null());
  EXPECT_TRUE(forgiving::at(kPlan, "knee").is_null());
}

TEST(ForgivingRead, NullAndWrongTypesAreAbsentNotErrors) {
  EXPECT_EQ(forgiving::text(kPlan, "explanation", "none given"), "none given");
  EXPECT_EQ(forgiving::string(kPlan, "limit"), std::nullopt);
  EXPECT_EQ(forgiving::number(kPlan, "cost"), std::nullopt);
  EXPECT_EQ(forgiving::boolean(kPlan, "nodes"), std::nullopt);
  EXPECT_TRUE(forgiving::array(kPlan, "chosen").empty());
  EXPECT_TRUE(forgiving::object(kPlan, "front").is_null());
}

TEST(ForgivingRead, NumbersAndBooleansReadAsTextInTheirJsonSpelling) {
  EXPECT_EQ(forgiving::string(kPlan, "nodes"), "4");
  EXPECT_EQ(forgiving::text(kPlan, "to_target", ""), "false");
}

TEST(ForgivingRead, NonFiniteNumbersAreAbsent) {
  EXPECT_EQ(forgiving::number(json(std::numeric_limits<double>::infinity())), std::nullopt);
  EXPECT_EQ(forgiving::number(json(std::numeric_limits<double>::quiet_NaN())), std::nullopt);
  EXPECT_EQ(forgiving::number(json(-2)), -2.0);
}

TEST(ForgivingRead, AParentThatIsNotAnObjectHoldsNothing) {
  for (const json& parent : {json(), json(3), json("text"), json::array({1, 2})}) {
    EXPECT_TRUE(forgiving::at(parent, "epochs").is_null()) << parent.dump();
    EXPECT_EQ(forgiving::number(parent, "epochs"), std::nullopt) << parent.dump();
    EXPECT_TRUE(forgiving::array(parent, "front").empty()) << parent.dump();
  }
  // Chained reads through absent parents stay absent.
  EXPECT_EQ(forgiving::string(forgiving::object(kPlan, "knee_sensitivity"), "statement"), std::nullopt);
}

// The strict reads, for contrast: the same plan's wrong fields are errors that name the field.
TEST(StrictRead, WrongTypesThrowNamingTheField) {
  try {
    number(kPlan, "cost", "plan", 0);
    FAIL() << "a string read as a number";
  } catch (const ProfileError& e) {
    EXPECT_STREQ(e.what(), "plan.cost: must be a number");
  }
  EXPECT_THROW(text(kPlan, "explanation", "plan"), ProfileError);
  EXPECT_EQ(text_or(kPlan, "explanation", "plan", "none"), "none");
}

}  // namespace
}  // namespace tula::predict::json_fields
