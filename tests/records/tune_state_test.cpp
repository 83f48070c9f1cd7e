// tune.json: what the writer writes, the reader reads back, and a file that
// is not one is refused naming the file and what is wrong.
#include "records/tune_state.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "helpers/temp_dir.hpp"
#include "records/record_error.hpp"

namespace tula::records {
namespace {

void write(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

TEST(TuneState, WhatIsWrittenIsReadBack) {
  testing::TempDir dir;
  TuneState s;
  s.options = {{"model", "resnet20"}, {"epochs", 3}};
  s.phase = TunePhase::Training;
  s.origin_unix = 1700000000.5;
  s.pauses = {{1700000100, 12.5}};
  s.elapsed_s = 88;
  s.profile_s = 10;
  s.pilot_s = 20;
  s.train_s = 50;
  s.restart_s = 3;
  s.spent = 0.25;
  s.retries = 1;
  s.launches = 3;
  s.restart_cost_s = 6.5;
  s.machine = 2;
  s.config = {1, 2, 64, 2};
  write_tune_state(dir.path().string(), s);
  const TuneState r = read_tune_state(dir.path().string());
  EXPECT_EQ(r.options, s.options);
  EXPECT_EQ(r.phase, TunePhase::Training);
  EXPECT_DOUBLE_EQ(r.origin_unix, s.origin_unix);
  ASSERT_EQ(r.pauses.size(), 1u);
  EXPECT_DOUBLE_EQ(r.pauses[0].seconds, 12.5);
  EXPECT_DOUBLE_EQ(r.spent, 0.25);
  EXPECT_EQ(r.launches, 3);
  EXPECT_EQ(r.machine, 2u);
  EXPECT_EQ(r.config, s.config);
  EXPECT_EQ(read_tune_phase(dir.path().string()), TunePhase::Training);
}

TEST(TuneState, AFileThatIsNotOneIsRefusedNamingWhy) {
  testing::TempDir dir;
  const std::string d = dir.path().string();
  EXPECT_FALSE(read_tune_phase(d)) << "not written yet";
  const auto message = [&] {
    try {
      read_tune_state(d);
    } catch (const RecordError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message().find("not there"), std::string::npos) << message();
  write(dir.path() / "tune.json", "{\"format\": \"tula-tune-state\", ");
  EXPECT_NE(message().find("not readable JSON"), std::string::npos) << message();
  write(dir.path() / "tune.json", R"({"format": "something-else", "version": 1})");
  EXPECT_NE(message().find("not a tula tune state"), std::string::npos) << message();
  write(dir.path() / "tune.json", R"({"format": "tula-tune-state", "version": 1, "options": {}, "phase": "piloted",
                                      "origin_unix": 1, "elapsed_s": 2})");
  EXPECT_NE(message().find("\"piloted\" is not a tune phase"), std::string::npos) << message();
  write(dir.path() / "tune.json", R"({"format": "tula-tune-state", "version": 1, "options": {}, "phase": "new",
                                      "origin_unix": "yesterday", "elapsed_s": 2})");
  EXPECT_NE(message().find("tune.json"), std::string::npos) << message();
}

}  // namespace
}  // namespace tula::records
