// docs/formats.md says exactly what the writers write: for each record, the
// keys in its table are the keys of the writer's output, no more, no fewer.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "records/metrics_records.hpp"
#include "records/tune_report.hpp"
#include "records/tune_state.hpp"

namespace tula::records {
namespace {

using Keys = std::set<std::string>;

// Heading (the text after the #s) -> the keys its table lists.
std::map<std::string, Keys> documented_keys() {
  std::ifstream in(std::string(TULA_SOURCE_DIR) + "/docs/formats.md");
  EXPECT_TRUE(in) << "docs/formats.md";
  std::map<std::string, Keys> out;
  const std::regex heading(R"(^#{2,3} (.*)$)"), row(R"(^\| `([a-z_]+)` \|)");
  std::string current, line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, heading)) current = m[1];
    if (std::regex_search(line, m, row)) out[current].insert(m[1]);
  }
  return out;
}

Keys keys_of(const nlohmann::json& j) {
  Keys k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  return k;
}

TEST(FormatsDoc, EveryMetricsRecordsTableListsExactlyWhatIsWritten) {
  const auto docs = documented_keys();
  IterRecord iter;
  iter.skipped = true;  // the keys written only sometimes
  iter.probe_batch = 64;
  EpochRecord epoch;
  epoch.evaluation = Evaluation{};
  const std::vector<MetricsRecord> every = {StartRecord{}, iter,          TensorsRecord{}, EvalRecord{},
                                            epoch,         ResizeRecord{}, StoppedRecord{}, FinalTestRecord{}};
  for (auto record : every) {
    std::visit([](auto& r) { r.time = 1; }, record);
    const std::string heading = std::string("`") + record_type(record) + "`";
    ASSERT_TRUE(docs.contains(heading)) << "docs/formats.md has no section " << heading;
    EXPECT_EQ(docs.at(heading), keys_of(to_json(record))) << heading;
  }
}

TEST(FormatsDoc, TheTuneStateAndReportTablesListExactlyWhatIsWritten) {
  const auto docs = documented_keys();
  EXPECT_EQ(docs.at("tune.json"), keys_of(to_json(TuneState{})));
  TuneReport report;
  report.price = ReportPrice{};
  report.exit_code = 0;
  report.give_up = GiveUpRecord{};
  report.schedule = {ScheduleSegmentRecord{}, ScheduleSegmentRecord{}};
  EXPECT_EQ(docs.at("report.json"), keys_of(to_json(report)));
  TimelinePoint point;
  point.outlook = "written when set";
  point.predicted_remaining_range = SecondsRange{1, 2};  // likewise
  EXPECT_EQ(docs.at("A timeline point"), keys_of(to_json(point)));
  EXPECT_EQ(docs.at("A re-plan"), keys_of(to_json(ReplanRecord{})));
}

}  // namespace
}  // namespace tula::records
