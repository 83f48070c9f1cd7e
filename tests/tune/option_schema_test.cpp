// The option schema: one entry per option, names that do not collide, every
// recorded option round-tripping through tune.json, older records read once
// into today's options, and a child handed each value exactly.
#include "tune/option_schema.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

namespace tula::tune {
namespace {

using nlohmann::json;

TEST(OptionSchema, NamesFlagsAndKeysAreUnique) {
  std::set<std::string> names, keys;
  for (const auto& s : option_specs()) {
    EXPECT_TRUE(names.insert(s.name).second) << "two entries named " << s.name;
    if (s.in_record) {
      EXPECT_TRUE(keys.insert(s.key()).second) << "two entries keyed " << s.key();
    }
    EXPECT_EQ(s.flag().rfind("--", 0), 0u);
    EXPECT_EQ(s.flag().find('_'), std::string::npos) << s.flag();
    if (s.in_cli) {
      EXPECT_NE(std::string(s.help), "") << s.name << " has a flag and no help";
    }
  }
}

TEST(OptionSchema, EveryDefaultIsWithinItsBounds) {
  const TuneOptions o;
  for (const auto& s : option_specs()) {
    if (s.kind != FieldKind::Number && s.kind != FieldKind::Integer) continue;
    if (s.unset && option_json(s, o) == json(*s.unset)) continue;  // "not given"
    EXPECT_FALSE(bound_refusal(s, option_json(s, o))) << s.name << ": " << *bound_refusal(s, option_json(s, o));
  }
}

// Each recorded option set away from its default comes back from tune.json.
TEST(OptionSchema, EveryRecordedOptionRoundTripsThroughTuneJson) {
  TuneOptions o;
  for (const auto& s : option_specs()) {
    if (!s.in_record) continue;
    const json before = option_json(s, o);
    json changed;
    switch (s.kind) {
      case FieldKind::Flag: changed = !before.get<bool>(); break;
      case FieldKind::Number: changed = s.range.hi_open ? (s.range.lo + s.range.hi) / 3 : s.range.hi; break;
      case FieldKind::Integer: changed = s.integer_range.hi; break;
      case FieldKind::List: changed = json::array({"/a", "/b"}); break;
      default: changed = std::string("given-") + s.name;
    }
    set_option(s, o, changed);
  }
  const TuneOptions back = tune_options_from_json(to_json(o));
  for (const auto& s : option_specs()) {
    if (s.in_record) {
      EXPECT_EQ(option_json(s, back), option_json(s, o)) << s.key();
    }
  }
  EXPECT_EQ(to_json(back), to_json(o));
}

// tune.json is a format jobs are resumed and replayed from: its keys are the ones written before the schema
// (and `device` and `precision`, added since; a record without them ran on the CPU at fp32).
TEST(OptionSchema, TuneJsonKeepsItsKeys) {
  const std::set<std::string> recorded = {"model", "dataset", "data_dir", "target_accuracy", "epochs", "objective", "resources", "device", "precision", "backend", "cluster_state", "out_dir", "data_roots", "optimizer", "lr", "reference_batch", "lr_scaling", "momentum", "weight_decay", "warmup_epochs", "warmup_at_reference", "seed", "profile_path", "profile_budget_s", "profile_cache", "pilot_steps", "pilot_workers", "pilot_batch", "noise_growth", "loss_forecast", "epochs_floor", "history", "history_path", "forecast_with_prior", "forecast_exponent_prior", "clock_times", "local_price_per_hour", "watch_every_steps", "watch_every_s", "synthetic_size", "image_size", "eval_crop", "augment", "eval_every_epochs", "validation_size", "evaluations_from_epoch_start", "eval_average", "min_saving", "restart_cost_s", "replan", "max_epochs", "give_up_after", "on_out_of_reach", "max_retries", "start_at", "start_on", "then_at", "then_on"};
  std::set<std::string> written;
  const json j = to_json(TuneOptions{});
  for (auto it = j.begin(); it != j.end(); ++it) written.insert(it.key());
  EXPECT_EQ(written, recorded);
}

// A record without a key stands for the option's value before it existed.
TEST(OptionSchema, ARecordWithoutAnOptionReadsAsItRanBeforeTheOption) {
  const json old = {{"model", "small_cnn"}, {"epochs", 2}};
  const TuneOptions back = tune_options_from_json(old);
  EXPECT_FALSE(back.replay.noise_growth);
  EXPECT_FALSE(back.replay.clock_times);
  EXPECT_FALSE(back.replay.evaluations_from_epoch_start);
  EXPECT_EQ(back.watch.validation_size, 0);
  EXPECT_EQ(back.watch.eval_average, 0.0);
  EXPECT_TRUE(back.training.warmup_at_reference);
  EXPECT_EQ(back.training.lr, TuneOptions{}.training.lr)
      << "an option whose meaning did not change reads today's default";
}

TEST(OptionSchema, AChildReadsEveryNumberBackExactly) {
  TuneOptions o;
  o.training.lr = 1.0 / 3;
  o.job.target_accuracy = 0.123456789012345;
  o.training.momentum = 0.9;
  o.training.weight_decay = 5e-4;
  o.training.seed = 18446744073709551615ull;
  for (const char* name : {"lr", "target_accuracy", "momentum", "weight_decay"}) {
    const std::string text = option_text(option(name), o);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), option_json(option(name), o).get<double>()) << name << ": " << text;
  }
  EXPECT_EQ(option_text(option("momentum"), o), "0.9") << "the shortest text that reads back";
  EXPECT_EQ(option_text(option("seed"), o), "18446744073709551615");
  std::vector<std::string> args;
  append_option(args, o, "target_accuracy");
  EXPECT_EQ(args, (std::vector<std::string>{"--target-accuracy", "0.123456789012345"}))
      << "std::to_string would have sent 0.123457";
}

// What every worker's `tula train` gets from the job: the shared options,
// the ones that mean "not given" at 0 left out, each read back exactly.
TEST(OptionSchema, TheWorkersGetTheSharedOptionsExactly) {
  TuneOptions o;
  o.job.epochs = 2;
  std::vector<std::string> args;
  append_train_options(args, o);
  const std::vector<std::string> today = {"--model", "small_cnn", "--dataset", "fashion-mnist", "--precision", "fp32",
                                          "--optimizer", "ags",
                                          "--lr", "0.05", "--reference-batch", "128", "--lr-scaling", "none",
                                          "--momentum", "0.9", "--weight-decay", "0.0005", "--seed", "0",
                                          "--eval-average", "0.99"};
  EXPECT_EQ(args, today);
  o.job.epochs = 0;
  o.job.target_accuracy = 0.123456789;
  o.job.synthetic_size = 512;
  o.job.image_size = 96;
  o.job.augment = false;
  o.watch.eval_average = 0;
  args.clear();
  append_train_options(args, o);
  const std::string line = [&] {
    std::string out;
    for (const auto& a : args) out += a + " ";
    return out;
  }();
  EXPECT_NE(line.find("--target-accuracy 0.123456789 "), std::string::npos) << line;
  EXPECT_NE(line.find("--synthetic-size 512 "), std::string::npos) << line;
  EXPECT_NE(line.find("--image-size 96 "), std::string::npos) << line;
  EXPECT_NE(line.find("--no-augment "), std::string::npos) << line;
  EXPECT_EQ(line.find("--eval-average"), std::string::npos) << "0: the trainer's own default, not given" << line;
}

TEST(OptionSchema, TheBoundsMessageNamesTheFlagTheRangeAndTheValue) {
  TuneOptions o;
  o.job.out_dir = "/tmp/x";
  o.job.target_accuracy = 1.5;
  try {
    o.validate();
    ADD_FAILURE() << "1.5 was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--target-accuracy must be a number from 0 to below 1 (got 1.5)");
  }
  o.job.target_accuracy = 0.8;
  o.watch.validation_size = -1;
  EXPECT_NO_THROW(o.validate()) << "-1 means a tenth";
  o.watch.validation_size = -2;
  EXPECT_THROW(o.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace tula::tune
