#include "tune/tune_report.hpp"

#include <gtest/gtest.h>

#include "tune/terminal.hpp"
#include "tune/tune_options.hpp"

namespace tula::tune {
namespace {

using nlohmann::json;

records::TimelinePoint at(double t_s, double remaining) {
  records::TimelinePoint p;
  p.t_s = t_s;
  p.predicted_remaining_s = remaining;
  return p;
}

TEST(TuneReport, RemainingTimeErrorAtQuartersOfTheRun) {
  // The run ends at 100 s; predictions of the time left made at 20, 30, 55 and 80 s.
  const std::vector<records::TimelinePoint> timeline = {at(20, 90), at(30, 63), at(55, 45), at(80, 22)};
  const auto e = remaining_time_errors(timeline, 100.0);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_DOUBLE_EQ(e[0].t_s, 30.0);  // first point at or after 25 s
  EXPECT_NEAR(e[0].error, (63.0 - 70.0) / 70.0, 1e-12);
  EXPECT_DOUBLE_EQ(e[1].t_s, 55.0);
  EXPECT_NEAR(e[1].error, 0.0, 1e-12);
  EXPECT_NEAR(e[2].error, (22.0 - 20.0) / 20.0, 1e-12);
}

// Each error keeps its watch's range, and the summary says whether the time
// that really was left fell in it.
TEST(TuneReport, TheErrorAtAQuarterKeepsItsWatchsRange) {
  auto with_range = [](double t_s, double remaining, double low, double high) {
    auto p = at(t_s, remaining);
    p.predicted_remaining_range = records::SecondsRange{low, high};
    return p;
  };
  // The run ends at 100 s: 70, 45 and 20 s were left at 30, 55 and 80 s.
  const std::vector<records::TimelinePoint> timeline = {at(20, 90), with_range(30, 63, 50, 80),
                                                        with_range(55, 40, 30, 44), at(80, 22)};
  records::TuneReport report;
  report.state = records::TuneOutcome::Succeeded;
  report.remaining_error = remaining_time_errors(timeline, 100.0);
  ASSERT_EQ(report.remaining_error.size(), 3u);
  ASSERT_TRUE(report.remaining_error[0].predicted_range);
  EXPECT_TRUE(report.remaining_error[0].predicted_range->holds(70));
  ASSERT_TRUE(report.remaining_error[1].predicted_range);
  EXPECT_FALSE(report.remaining_error[1].predicted_range->holds(45));
  EXPECT_FALSE(report.remaining_error[2].predicted_range) << "the watch at 80 s had none";
  const std::string s = closing_summary(report);
  EXPECT_NE(s.find("at 25% of the run: -10.0% off, within its 80% range (50s to 1m20s)"), std::string::npos) << s;
  EXPECT_NE(s.find("at 50% of the run: -11.1% off, outside its 80% range (30s to 44s)"), std::string::npos) << s;
  EXPECT_NE(s.find("at 75% of the run: +10.0% off\n"), std::string::npos) << s;
}

TEST(TuneReport, NoTimelineNoErrors) {
  EXPECT_TRUE(remaining_time_errors({}, 50).empty());
  EXPECT_TRUE(remaining_time_errors({at(10, 5)}, 0).empty());
}

TEST(TuneReport, ClosingSummarySaysOutcomeAndBill) {
  records::TuneReport report;
  report.state = records::TuneOutcome::Succeeded;
  report.reason = "test accuracy 85.1% reached the target 85.0%";
  report.chosen = records::PlacedConfig{"local", {1, 2, 256, 1}};
  report.predicted = records::ReportPrediction{110.0, 0.003, "plan", 0, ""};
  records::ReportMeasured measured;
  measured.time_s = 100;
  measured.cost = 0.0028;
  report.measured = measured;
  report.phases.profiling_share = 0.12;
  report.replans.resize(2);
  report.replans[0].applied = true;
  report.job.out_dir = "/tmp/job";
  const std::string s = closing_summary(report);
  EXPECT_NE(s.find("tune succeeded"), std::string::npos) << s;
  EXPECT_NE(s.find("2 workers x 256 (global batch 512)"), std::string::npos) << s;
  EXPECT_NE(s.find("+10.0%"), std::string::npos) << s;
  EXPECT_NE(s.find("12.0% of the job"), std::string::npos) << s;
  EXPECT_NE(s.find("1 applied, 1 declined"), std::string::npos) << s;
  EXPECT_NE(s.find("/tmp/job/report.html"), std::string::npos) << s;
}

// A job stopped before its end (a cancel, a server's stop, a target out of
// reach) measured a part of what the plan predicted: no error is given.
TEST(TuneReport, ClosingSummaryOfAStoppedJobGivesNoErrorForThePartItRan) {
  records::TuneReport report;
  report.state = records::TuneOutcome::Stopped;
  report.reason = "interrupted by SIGTERM";
  report.predicted = records::ReportPrediction{34.0, 0.001, "plan", 0, ""};
  records::ReportMeasured measured;
  measured.time_s = 9;
  measured.cost = 0.0002;
  report.measured = measured;
  const std::string s = closing_summary(report);
  EXPECT_NE(s.find("time: 9s so far, 34s predicted at the plan for the whole job"), std::string::npos) << s;
  EXPECT_NE(s.find("cost: 0.0002 USD so far"), std::string::npos) << s;
  EXPECT_EQ(s.find("%)"), std::string::npos) << "no error for a part of the job: " << s;
}

TEST(TuneOptions, ExactlyOneGoalAndWholeEpochs) {
  TuneOptions o;
  o.job.out_dir = "/tmp/x";
  EXPECT_THROW(o.validate(), std::invalid_argument);  // neither
  o.job.epochs = 2;
  EXPECT_NO_THROW(o.validate());
  o.job.target_accuracy = 0.9;
  EXPECT_THROW(o.validate(), std::invalid_argument);  // both
  o.job.epochs = 0;
  EXPECT_NO_THROW(o.validate());
  o.job.target_accuracy = 85;
  EXPECT_THROW(o.validate(), std::invalid_argument);  // a percentage, not a fraction
  o.job.target_accuracy = 0;
  o.job.epochs = 1.5;
  EXPECT_THROW(o.validate(), std::invalid_argument);
}

TEST(PilotLayout, TheDefaultLayoutUnlessTheObjectiveIsFastestOrTheUserSays) {
  TuneOptions o;  // the knee, rate tuned at 128
  auto p = pilot_layout(o);
  EXPECT_EQ(p.workers, 1) << "one worker at the reference batch: the default's layout";
  EXPECT_EQ(p.batch_per_worker, 128);
  o.training.reference_batch = 256;
  EXPECT_EQ(pilot_layout(o).batch_per_worker, 256);
  o.job.objective = "cheapest";
  EXPECT_EQ(pilot_layout(o).workers, 1);
  o.job.objective = "fastest";
  p = pilot_layout(o);
  EXPECT_EQ(p.workers, 2) << "the fastest objective's plan goes to more workers";
  EXPECT_EQ(p.batch_per_worker, 128) << "the reference batch of 256 over two workers";
  o.pilot.pilot_workers = 4;
  EXPECT_EQ(pilot_layout(o).batch_per_worker, 64) << "given workers share the reference batch";
  o.pilot.pilot_batch = 16;
  p = pilot_layout(o);
  EXPECT_EQ(p.workers, 4);
  EXPECT_EQ(p.batch_per_worker, 16) << "a given batch is taken as given";
  o.pilot.pilot_workers = -1;
  o.job.out_dir = "/tmp/x";
  o.job.epochs = 1;
  EXPECT_THROW(o.validate(), std::invalid_argument);
}

TEST(PilotLength, RunsToTheFirstEvaluationWhenItIsNear) {
  EXPECT_EQ(pilot_length(100, 108), 108) << "small_cnn at 128: a quarter epoch is 108 steps";
  EXPECT_EQ(pilot_length(100, 150), 150) << "half as many again is near enough";
  EXPECT_EQ(pilot_length(100, 151), 100) << "farther: the pilot keeps its length, no evaluation";
  EXPECT_EQ(pilot_length(100, 60), 100) << "an evaluation within the pilot already";
  EXPECT_EQ(pilot_length(100, 100), 100);
  EXPECT_EQ(pilot_length(0, 108), 0) << "no pilot stays none";
}

TEST(TuneOptions, StartAtParsesAndRefuses) {
  const auto c = parse_manual_config("2x16x4");
  EXPECT_EQ(c.workers, 2);
  EXPECT_EQ(c.batch_per_worker, 16);
  EXPECT_EQ(c.accumulation_steps, 4);
  EXPECT_EQ(parse_manual_config("1x8").accumulation_steps, 1);
  EXPECT_THROW(parse_manual_config("2x"), std::invalid_argument);
  EXPECT_THROW(parse_manual_config("0x8"), std::invalid_argument);
  EXPECT_THROW(parse_manual_config("2x8y"), std::invalid_argument);
}

TEST(TuneOptions, StartOnParsesAndRefuses) {
  const auto p = parse_manual_placement("emu-half:4");
  EXPECT_EQ(p.machine_type, "emu-half");
  EXPECT_EQ(p.nodes, 4);
  EXPECT_EQ(parse_manual_placement("emu-one").nodes, 1);
  EXPECT_THROW(parse_manual_placement(":2"), std::invalid_argument);
  EXPECT_THROW(parse_manual_placement("emu-one:0"), std::invalid_argument);
  EXPECT_THROW(parse_manual_placement("emu-one:2x"), std::invalid_argument);
  TuneOptions o;
  o.job.out_dir = "/tmp/x";
  o.job.target_accuracy = 0.8;
  EXPECT_NO_THROW(o.validate());
  o.watch.start_on = "emu-one:2";
  EXPECT_THROW(o.validate(), std::invalid_argument);  // places nothing without --start-at
  o.watch.start_at = "1x32";
  EXPECT_NO_THROW(o.validate());
}

TEST(TuneOptions, ThenAtParsesAndRefuses) {
  const auto m = parse_manual_move("0.5:2x128");
  EXPECT_DOUBLE_EQ(m.epochs, 0.5);
  EXPECT_EQ(m.config.workers, 2);
  EXPECT_EQ(m.config.batch_per_worker, 128);
  EXPECT_EQ(parse_manual_move("3:1x8x4").config.accumulation_steps, 4);
  for (const char* bad : {"2x128", "0:2x128", "-1:2x128", "x:2x128", "0.5:", "0.5:2x", "nan:1x8", "inf:1x8"}) {
    EXPECT_THROW(parse_manual_move(bad), std::invalid_argument) << bad;
  }
  try {
    parse_manual_move("0.5:2y8");
    ADD_FAILURE() << "a bad configuration after the epochs was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--then-at must look like"), std::string::npos) << e.what();
  }
  TuneOptions o;
  o.job.out_dir = "/tmp/x";
  o.job.target_accuracy = 0.8;
  o.watch.max_epochs = 4;
  o.watch.then_at = "1:2x64";
  EXPECT_THROW(o.validate(), std::invalid_argument);  // moves on from nothing without --start-at
  o.watch.start_at = "1x32";
  EXPECT_NO_THROW(o.validate());
  o.watch.then_on = "emu-one:2";
  EXPECT_NO_THROW(o.validate());
  o.watch.then_on = "emu-one:0";
  EXPECT_THROW(o.validate(), std::invalid_argument);
  o.watch.then_on = "emu-one:2";
  o.watch.then_at = "4:2x64";
  EXPECT_THROW(o.validate(), std::invalid_argument);  // the job ends by --max-epochs 4: the move would never come
  o.watch.then_at = "";
  EXPECT_THROW(o.validate(), std::invalid_argument);  // --then-on places nothing without --then-at
}

TEST(TuneOptions, RoundTripThroughJson) {
  TuneOptions o;
  o.job.model = "resnet20";
  o.job.target_accuracy = 0.8;
  o.job.objective = "deadline=2h";
  o.watch.start_at = "1x8";
  o.watch.start_on = "emu-one:2";
  o.watch.then_at = "0.5:2x64";
  o.watch.then_on = "emu-one:2";
  o.pilot.history_path = "/jobs/history.jsonl";
  o.job.augment = false;  // a resumed --no-augment job trains without it again
  o.job.image_size = 96;
  o.job.eval_crop = 0.9;
  o.watch.eval_average = 0.995;
  const auto back = tune_options_from_json(to_json(o));
  EXPECT_EQ(back.job.model, "resnet20");
  EXPECT_DOUBLE_EQ(back.job.target_accuracy, 0.8);
  EXPECT_EQ(back.job.objective, "deadline=2h");
  EXPECT_EQ(back.watch.start_at, "1x8");
  EXPECT_EQ(back.watch.start_on, "emu-one:2");
  EXPECT_EQ(back.watch.then_at, "0.5:2x64");
  EXPECT_EQ(back.watch.then_on, "emu-one:2");
  EXPECT_EQ(back.watch.validation_size, -1) << "the default (a tenth) survives the round trip";
  EXPECT_FALSE(back.pilot.loss_forecast) << "a new job forecasts from the evaluations alone";
  EXPECT_TRUE(back.replay.forecast_exponent_prior);
  EXPECT_TRUE(back.replay.epochs_floor);
  EXPECT_TRUE(back.pilot.history);
  EXPECT_EQ(back.pilot.history_path, "/jobs/history.jsonl");
  EXPECT_TRUE(back.replay.forecast_with_prior);
  EXPECT_TRUE(back.replay.clock_times);
  EXPECT_FALSE(back.job.augment);
  EXPECT_EQ(back.job.image_size, 96);
  EXPECT_DOUBLE_EQ(back.job.eval_crop, 0.9);
  EXPECT_DOUBLE_EQ(back.watch.eval_average, 0.995);
}

TEST(TuneOptions, AJobWrittenBeforeValidationAndLossForecastGoesOnAsItRan) {
  auto j = to_json(TuneOptions{});
  j.erase("validation_size");
  j.erase("loss_forecast");
  j.erase("forecast_exponent_prior");
  j.erase("epochs_floor");
  j.erase("history");
  j.erase("forecast_with_prior");
  j.erase("clock_times");
  j.erase("warmup_at_reference");
  j.erase("eval_average");
  const auto back = tune_options_from_json(j);
  EXPECT_EQ(back.watch.validation_size, 0) << "the test split, as such jobs evaluated";
  EXPECT_FALSE(back.pilot.loss_forecast);
  EXPECT_FALSE(back.replay.forecast_exponent_prior) << "fitted the evaluations' exponent alone";
  EXPECT_FALSE(back.replay.epochs_floor) << "planned with the law alone";
  EXPECT_FALSE(back.pilot.history) << "planned with the stated prior";
  EXPECT_FALSE(back.replay.forecast_with_prior) << "took the forecast alone";
  EXPECT_FALSE(back.replay.clock_times) << "timed the median step";
  EXPECT_TRUE(back.training.warmup_at_reference) << "warmed up at every batch";
  EXPECT_EQ(back.watch.eval_average, 0) << "evaluated the weights themselves";
  EXPECT_FALSE(tune_options_from_json(to_json(TuneOptions{})).training.warmup_at_reference)
      << "a job of today keeps its rule";
}

TEST(TuneOptions, ALaunchWarmsUpOnlyAboveTheBatchItsRateWasTunedAt) {
  TuneOptions o;  // rate tuned at 128, 0.5 epochs of warmup
  EXPECT_EQ(launch_warmup_epochs(o, 64), 0.0);
  EXPECT_EQ(launch_warmup_epochs(o, 128), 0.0) << "the tuned rate at its own batch needs no warmup";
  EXPECT_EQ(launch_warmup_epochs(o, 256), 0.5);
  o.training.warmup_at_reference = true;
  EXPECT_EQ(launch_warmup_epochs(o, 128), 0.5);
  EXPECT_EQ(launch_warmup_epochs(o, 64), 0.5);
}

TEST(TuneOptions, TheValidationSplitIsATenthAtMost5000AndLeavesHalfToTrainOn) {
  TuneOptions o;
  EXPECT_EQ(validation_samples(o, 60000), 5000);
  EXPECT_EQ(validation_samples(o, 512), 51);
  o.watch.validation_size = 0;
  EXPECT_EQ(validation_samples(o, 60000), 0);
  o.watch.validation_size = 2000;
  EXPECT_EQ(validation_samples(o, 60000), 2000);
  o.watch.validation_size = 400;
  try {
    validation_samples(o, 512);
    FAIL() << "400 of 512 samples held out was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--validation-size 400"), std::string::npos) << e.what();
  }
  o.watch.validation_size = -2;
  EXPECT_THROW(o.validate(), std::invalid_argument);
}

TEST(Terminal, TheTimeLeftShowsItsRangeWhereThereIsOne) {
  EXPECT_EQ(time_left_text(std::nullopt, std::nullopt), "time left: not yet predicted");
  EXPECT_EQ(time_left_text(150, std::nullopt), "~2m30s left (predicted)");
  EXPECT_EQ(time_left_text(150, records::SecondsRange{130, 185}), "~2m30s left (2m10s to 3m05s, predicted)");
}

TEST(Terminal, DurationsReadLikeAClock) {
  EXPECT_EQ(format_duration(42), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(-1), "?");
}

}  // namespace
}  // namespace tula::tune
