// report.json: every report the bench recorded in bench/results reads into
// the typed record and writes back as the same document, and a document that
// is not a report is refused saying why.
#include "records/tune_report.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers/temp_dir.hpp"
#include "records/record_error.hpp"

namespace tula::records {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What `read` refuses `j` with, or "no error".
template <typename Read>
std::string error_of(Read read, const json& j) {
  try {
    read(j);
  } catch (const RecordError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

std::vector<fs::path> recorded_reports() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(TULA_SOURCE_DIR) / "bench" / "results" / "tune")) {
    if (e.path().string().ends_with(".report.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TuneReportRecord, EveryRecordedReportIsReadAndWrittenBackAsItWas) {
  const auto paths = recorded_reports();
  ASSERT_GE(paths.size(), 10u) << "bench/results/tune holds the recorded jobs";
  for (const auto& path : paths) {
    std::ifstream in(path);
    const json original = json::parse(in);
    const TuneReport report = tune_report_from_json(original);
    EXPECT_EQ(to_json(report), original) << path << ": the typed record loses or changes something";
  }
}

TEST(TuneReportRecord, AReportIsWrittenAtomicallyAndReadBack) {
  testing::TempDir dir;
  EXPECT_FALSE(read_tune_report(dir.str())) << "none yet";
  TuneReport r;
  r.state = TuneOutcome::Stopped;
  r.reason = "out of reach";
  r.exit_code = 3;
  r.chosen = PlacedConfig{"local", {1, 2, 16, 1}};
  TimelinePoint p;
  p.step = 50;
  p.predicted_remaining_s = 12;
  p.predicted_remaining_range = SecondsRange{9, 17};
  p.iteration_s = 0.1;
  r.timeline.push_back(p);
  RemainingError e;
  e.fraction = 0.5;
  e.measured_remaining_s = 20;
  e.predicted_range = SecondsRange{9, 17};
  r.remaining_error.push_back(e);
  write_tune_report(dir.str(), r);
  const auto back = read_tune_report(dir.str());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->state, TuneOutcome::Stopped);
  EXPECT_EQ(back->exit_code, 3);
  EXPECT_EQ(back->chosen->global_batch(), 32);
  ASSERT_EQ(back->timeline.size(), 1u);
  EXPECT_EQ(back->timeline[0].iteration_s, 0.1);
  EXPECT_FALSE(back->timeline[0].b_noise);
  ASSERT_TRUE(back->timeline[0].predicted_remaining_range);
  EXPECT_EQ(back->timeline[0].predicted_remaining_range->high_s, 17);
  ASSERT_EQ(back->remaining_error.size(), 1u);
  EXPECT_EQ(to_json(*back)["remaining_error"][0]["within_range"], false) << "20 s left, predicted 9 to 17";
  EXPECT_EQ(to_json(*back), to_json(r));
}

TEST(TuneReportRecord, WhatIsNotAReportIsRefusedSayingWhy) {
  const auto error_of = [](const json& j) { return records::error_of(tune_report_from_json, j); };
  EXPECT_NE(error_of(json{{"format", "tula-profile"}}).find("not a tula tune report"), std::string::npos);
  EXPECT_NE(error_of(json{{"format", "tula-tune-report"}, {"version", 7}}).find("version 7"), std::string::npos);
  const json base = {{"format", "tula-tune-report"}, {"version", 1}};
  json bad = base;
  bad["state"] = "exploded";
  EXPECT_NE(error_of(bad).find("\"exploded\" is not a tune outcome"), std::string::npos) << error_of(bad);
  bad = base;
  bad["timeline"] = json::array({{{"t_s", "soon"}}});
  EXPECT_NE(error_of(bad).find("timeline"), std::string::npos) << error_of(bad);
  bad = base;
  bad["timeline"] = json::array({{{"predicted_remaining_range_s", {12}}}});
  EXPECT_NE(error_of(bad).find("'predicted_remaining_range_s' must be [low, high] seconds"), std::string::npos)
      << error_of(bad);
  EXPECT_EQ(tune_report_from_json(base).state, TuneOutcome::Running) << "a report just begun";
}

TEST(TuneReportRecord, AProgressEventReadsAsTheTimelinePointItWasLessItsDroppedFields) {
  TimelinePoint p;
  p.t_s = 40;
  p.step = 300;
  p.predicted_total_s = 100;
  p.predicted_remaining_s = 60;
  p.predicted_remaining_range = SecondsRange{50, 75};
  p.b_noise = 512;
  json event = to_json(p);
  // What the service leaves out of its progress event (service/supervisor.cpp).
  for (const char* k : {"workers", "b_noise", "test_accuracy", "target_min_steps", "forecast"}) event.erase(k);
  const TimelinePoint back = timeline_point_from_json(event);
  EXPECT_EQ(back.step, 300);
  EXPECT_EQ(back.predicted_remaining_s, 60);
  ASSERT_TRUE(back.predicted_remaining_range);
  EXPECT_EQ(back.predicted_remaining_range->low_s, 50);
  EXPECT_FALSE(back.b_noise) << "dropped from the event";

  const auto error_of = [](const json& j) { return records::error_of(timeline_point_from_json, j); };
  EXPECT_NE(error_of(json::array({1, 2})).find("must be an object"), std::string::npos);
  EXPECT_NE(error_of(json{{"step", "soon"}}).find("timeline point"), std::string::npos) << error_of(json{{"step", "soon"}});
  EXPECT_NE(error_of(json{{"predicted_remaining_range_s", {3, 4, 5}}}).find("[low, high]"), std::string::npos);
}

}  // namespace
}  // namespace tula::records
