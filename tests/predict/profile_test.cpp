#include "predict/profile.hpp"

#include <gtest/gtest.h>

#include "helpers/expect_error.hpp"
#include "helpers/temp_dir.hpp"
#include "predict/error.hpp"
#include "predict/fit.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

// The message of the ProfileError that parsing `j` throws ("" if none).
std::string error_of(const nlohmann::json& j) {
  return tula::testing::error_message<ProfileError>([&] { profile_from_json(j); });
}

nlohmann::json good() { return to_json(test::make_profile({}, 1)); }

TEST(Profile, RoundTripsThroughJsonAndDisk) {
  auto p = test::make_profile({}, 1);
  p.fitted = to_json(fit_profile(p));
  const auto j = to_json(p);
  const auto back = profile_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.model.name, "resnet20");
  EXPECT_EQ(back.hardware.math_library, "/usr/lib/synthetic/libblas.so.3");
  EXPECT_EQ(back.compute.size(), p.compute.size());
  EXPECT_EQ(back.gradient_noise.size(), p.gradient_noise.size());
  // The stored fit reads back into the same models.
  const auto fitted = fitted_from_json(back.fitted);
  EXPECT_DOUBLE_EQ(fitted.compute.params.value(1), fit_profile(p).compute.params.value(1));

  const tula::testing::TempDir dir;
  const auto path = dir.file("profile.json");
  save_profile(p, path);
  EXPECT_EQ(to_json(load_profile(path)), j);
}

TEST(Profile, PilotStepTimesRoundTripAndNeedTheirLayout) {
  auto p = test::make_profile({}, 2);
  ASSERT_FALSE(p.pilots.empty());
  auto& pilot = p.pilots.front();
  pilot.workers = 2;
  pilot.batch_per_worker = pilot.global_batch / 2;
  pilot.seconds_per_step = 0.25;
  const auto j = to_json(p);
  const auto back = profile_from_json(j);
  EXPECT_DOUBLE_EQ(back.pilots.front().seconds_per_step, 0.25);
  EXPECT_EQ(back.pilots.front().workers, 2);
  EXPECT_EQ(to_json(back), j);

  auto no_layout = j;
  no_layout["samples"]["pilots"][0].erase("workers");
  EXPECT_THROW(profile_from_json(no_layout), ProfileError);
  auto wrong_layout = j;
  wrong_layout["samples"]["pilots"][0]["workers"] = 3;
  EXPECT_NE(error_of(wrong_layout).find("is not global_batch"), std::string::npos)
      << "a layout that does not multiply to the global batch was accepted";

  pilot.eval_s = 1.5;
  const auto with_eval = to_json(p);
  EXPECT_DOUBLE_EQ(profile_from_json(with_eval).pilots.front().eval_s, 1.5);
  EXPECT_EQ(to_json(profile_from_json(with_eval)), with_eval);
  auto eval_without_workers = with_eval;
  eval_without_workers["samples"]["pilots"][0].erase("seconds_per_step");
  eval_without_workers["samples"]["pilots"][0].erase("workers");
  EXPECT_NE(error_of(eval_without_workers).find("eval_s"), std::string::npos)
      << "an evaluation time without the workers it was shared over was accepted";

  // The step's split: both parts back as written, absent as "not recorded".
  EXPECT_LT(profile_from_json(j).pilots.front().comm_exposed_s, 0);
  pilot.comm_exposed_s = 0.05;
  pilot.comm_busy_s = 0.08;
  const auto split = to_json(p);
  EXPECT_DOUBLE_EQ(profile_from_json(split).pilots.front().comm_exposed_s, 0.05);
  EXPECT_DOUBLE_EQ(profile_from_json(split).pilots.front().comm_busy_s, 0.08);
  EXPECT_EQ(to_json(profile_from_json(split)), split);
  auto exposed_beyond_step = split;
  exposed_beyond_step["samples"]["pilots"][0]["comm_exposed_s"] = 0.5;
  EXPECT_NE(error_of(exposed_beyond_step).find("comm_exposed_s"), std::string::npos)
      << "an exposed allreduce longer than the step it is part of was accepted";
}

TEST(Profile, TheBucketsRoundTripAndHoldTheGradient) {
  auto p = test::make_profile({}, 3);
  p.model.bucket_bytes = {p.model.gradient_bytes - 1000, 1000};
  const auto j = to_json(p);
  EXPECT_EQ(profile_from_json(j).model.bucket_bytes, p.model.bucket_bytes);
  EXPECT_EQ(to_json(profile_from_json(j)), j);
  auto short_of_it = j;
  short_of_it["model"]["bucket_bytes"] = {1000};
  EXPECT_NE(error_of(short_of_it).find("model.bucket_bytes: the buckets hold 1000 bytes"), std::string::npos);
  auto negative = j;
  negative["model"]["bucket_bytes"] = {-1};
  EXPECT_NE(error_of(negative).find("positive whole number"), std::string::npos);
}

TEST(Profile, BucketReadinessRoundTripsAndIsChecked) {
  auto p = test::make_profile({}, 5);
  p.model.bucket_bytes = {p.model.gradient_bytes - 1000, 1000};
  p.compute.front().bucket_ready_fraction = {0.25, 0.98};
  const auto j = to_json(p);
  EXPECT_EQ(profile_from_json(j).compute.front().bucket_ready_fraction, p.compute.front().bucket_ready_fraction);
  EXPECT_EQ(to_json(profile_from_json(j)), j);
  auto three = j;
  three["samples"]["compute"][0]["bucket_ready_fraction"] = {0.1, 0.5, 1.0};
  EXPECT_NE(error_of(three).find("3 shares for the 2 buckets"), std::string::npos);
  auto falling = j;
  falling["samples"]["compute"][0]["bucket_ready_fraction"] = {0.6, 0.5};
  EXPECT_NE(error_of(falling).find("cannot decrease"), std::string::npos);
  auto beyond = j;
  beyond["samples"]["compute"][0]["bucket_ready_fraction"] = {0.5, 1.5};
  EXPECT_NE(error_of(beyond).find("in [0, 1]"), std::string::npos);
}

TEST(Profile, ThePrecisionItTimedRoundTripsAndAnFp32ProfileIsWrittenAsBefore) {
  auto p = test::make_profile({}, 7);
  const auto fp32 = to_json(p);
  EXPECT_FALSE(fp32.contains("precision")) << "an fp32 profile is written as it always was";
  EXPECT_EQ(profile_from_json(fp32).precision, "fp32");
  p.precision = "bf16";
  const auto j = to_json(p);
  EXPECT_EQ(j.at("precision"), "bf16");
  EXPECT_EQ(profile_from_json(j).precision, "bf16");
  auto bad = j;
  bad["precision"] = "fp64";
  EXPECT_NE(error_of(bad).find("precision: 'fp64' is not fp32, bf16 or fp16"), std::string::npos) << error_of(bad);
}

TEST(Profile, MalformedJsonIsAClearError) {
  tula::testing::expect_error<ProfileError>([] { parse_profile("{\"format\": \"tula-profile\", "); },
                                            {"malformed JSON"});
  EXPECT_THROW(load_profile("/nonexistent/profile.json"), ProfileError);
}

TEST(Profile, WrongFormatAndVersionsAreRejected) {
  auto j = good();
  j["format"] = "something-else";
  EXPECT_NE(error_of(j).find("format"), std::string::npos);
  j = good();
  j["version"] = 0;
  EXPECT_NE(error_of(j).find("older"), std::string::npos);
  j = good();
  j["version"] = 2;
  EXPECT_NE(error_of(j).find("newer"), std::string::npos);
  j = good();
  j.erase("version");
  EXPECT_NE(error_of(j).find("version: missing"), std::string::npos);
}

TEST(Profile, MissingOrIllTypedFieldsAreNamed) {
  auto j = good();
  j["model"].erase("parameters");
  EXPECT_NE(error_of(j).find("model.parameters: missing"), std::string::npos);
  j = good();
  j["hardware"]["device"]["memory_bytes"] = "lots";
  EXPECT_NE(error_of(j).find("hardware.device.memory_bytes"), std::string::npos);
  j = good();
  j["samples"]["compute"][2]["forward_backward_s"][1] = -0.5;
  EXPECT_NE(error_of(j).find("samples.compute[2].forward_backward_s[1]"), std::string::npos);
  j = good();
  j["samples"]["allreduce"][0]["workers"] = 1;
  EXPECT_NE(error_of(j).find("samples.allreduce[0].workers"), std::string::npos);
  j = good();
  j.erase("target_accuracy");
  EXPECT_NE(error_of(j).find("target_accuracy"), std::string::npos);  // pilots need it
  j = good();
  j["samples"]["overlap"][0]["hidden_fraction"] = 1.5;
  EXPECT_NE(error_of(j).find("hidden_fraction"), std::string::npos);
}

TEST(Profile, TooFewSamplesAreNamed) {
  auto j = good();
  auto& compute = j["samples"]["compute"];
  compute = nlohmann::json::array({compute[0], compute[1]});
  EXPECT_NE(error_of(j).find("samples.compute: 2 distinct"), std::string::npos);
  j = good();
  j["samples"]["memory"] = nlohmann::json::array({j["samples"]["memory"][0]});
  EXPECT_NE(error_of(j).find("samples.memory"), std::string::npos);
  j = good();
  j["samples"]["allreduce"] = nlohmann::json::array();
  EXPECT_NE(error_of(j).find("samples.allreduce"), std::string::npos);
}

TEST(Profile, OptionalSectionsMayBeAbsent) {
  auto j = good();
  for (const char* k : {"overlap", "evaluation", "gradient_noise", "pilots"}) j["samples"].erase(k);
  j.erase("target_accuracy");
  j.erase("buckets");
  const auto p = profile_from_json(j);
  EXPECT_TRUE(p.overlap.empty());
  EXPECT_EQ(p.buckets.bucket_bytes, 25LL << 20);
}

}  // namespace
}  // namespace tula::predict
