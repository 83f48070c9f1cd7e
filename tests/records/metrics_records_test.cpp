// metrics.jsonl's records: each type written and read back field for field,
// the optimizer's own terms kept, a file being appended to read line by line,
// and a bad line named or skipped.
#include "records/metrics_records.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "helpers/temp_dir.hpp"
#include "records/metrics_file.hpp"
#include "records/record_error.hpp"

namespace tula::records {
namespace {

using nlohmann::json;

MetricsRecord round_trip(const MetricsRecord& r) {
  const auto back = metrics_record_from_json(json::parse(to_json(r).dump()), "test");
  EXPECT_TRUE(back.has_value());
  return *back;
}

TEST(MetricsRecords, EveryTypeIsReadBackAsWritten) {
  IterRecord it;
  it.epoch = 2;
  it.step = 41;
  it.step_in_epoch = 7;
  it.global_batch = 256;
  it.workers = 4;
  it.loss = 0.75;
  it.lr = 0.1;
  it.times.iter_s = 0.5;
  it.times.samples_per_s = 512;
  it.local_grad_sq = 3.5;
  it.global_grad_sq = 1.25;
  it.probe_batch = 32;
  it.peak_rss_bytes = 1 << 30;
  it.optimizer_terms = {{"ags_clipped_low", 0.25}, {"trust_ratio", {{"median", 1.5}}}};
  it.time = 1700000000.25;
  const auto it2 = std::get<IterRecord>(round_trip(it));
  EXPECT_EQ(it2.step, 41);
  EXPECT_EQ(it2.workers, 4);
  EXPECT_DOUBLE_EQ(it2.loss, 0.75);
  EXPECT_DOUBLE_EQ(it2.global_grad_sq, 1.25);
  EXPECT_EQ(it2.probe_batch, 32);
  EXPECT_FALSE(it2.optimizer_terms.contains("probe_batch")) << "a key of the record, not an optimizer term";
  EXPECT_EQ(it2.peak_rss_bytes, 1 << 30);
  EXPECT_DOUBLE_EQ(it2.time, it.time);
  EXPECT_EQ(it2.optimizer_terms, it.optimizer_terms) << "the optimizer's terms survive a read and a write";
  EXPECT_EQ(to_json(it2), to_json(it));

  EpochRecord ep;
  ep.epoch = 3;
  ep.step = 100;
  ep.train_loss = 0.5;
  ep.evaluation = Evaluation{0.4, 0.91, 2.5, 30};
  const auto ep2 = std::get<EpochRecord>(round_trip(ep));
  ASSERT_TRUE(ep2.evaluation);
  EXPECT_DOUBLE_EQ(ep2.evaluation->test_accuracy, 0.91);
  ep.evaluation.reset();
  EXPECT_FALSE(std::get<EpochRecord>(round_trip(ep)).evaluation) << "no evaluation: none read";
  EXPECT_FALSE(to_json(ep).contains("test_accuracy"));

  StartRecord st;
  st.model = "resnet20";
  st.workers = 2;
  st.batch_size = 64;
  st.global_batch = 128;
  st.evaluated_on = "validation";
  st.compute.precision = "bf16";
  st.compute.channels_last = true;
  st.compute.cudnn_benchmark = true;
  const auto st2 = std::get<StartRecord>(round_trip(st));
  EXPECT_EQ(st2.model, "resnet20");
  EXPECT_EQ(st2.compute.precision, "bf16");
  EXPECT_TRUE(st2.compute.channels_last);
  EXPECT_TRUE(st2.compute.cudnn_benchmark);
  EXPECT_EQ(st2.evaluated_on, "validation");
  EXPECT_EQ(to_json(st2), to_json(st));

  for (const MetricsRecord& r :
       {MetricsRecord(EvalRecord{1, 50, {0.3, 0.8, 1.5, 20}, 5}), MetricsRecord(ResizeRecord{60, 128, 512, 100, "batch schedule", 6}),
        MetricsRecord(StoppedRecord{70, 2, 5, "SIGTERM", true, 7}), MetricsRecord(TensorsRecord{80, {{"conv1.weight", 1.0}}, 8}),
        MetricsRecord(FinalTestRecord{90, {0.4, 0.85, 2, 30}, 10000, 9})}) {
    EXPECT_EQ(to_json(round_trip(r)), to_json(r)) << record_type(r);
    EXPECT_EQ(to_json(r)["type"], record_type(r));
  }
}

TEST(MetricsRecords, EvaluationsAndStepsAreFoundWhereverTheyAre) {
  EXPECT_FALSE(evaluation_of(IterRecord{}));
  EXPECT_FALSE(evaluation_of(EpochRecord{})) << "an epoch without an evaluation";
  EpochRecord ep;
  ep.step = 9;
  ep.evaluation = Evaluation{0.1, 0.9, 1, 2};
  EXPECT_EQ(evaluation_of(ep)->step, 9);
  EXPECT_DOUBLE_EQ(evaluation_of(EvalRecord{0, 4, {0.2, 0.7, 1, 1}, 3})->evaluation.test_accuracy, 0.7);
  EXPECT_FALSE(evaluation_of(FinalTestRecord{90, {0.4, 0.85, 2, 30}, 10000, 9}))
      << "the final test is not a point of the validation curve";
  EXPECT_FALSE(step_of(StartRecord{}));
  EXPECT_EQ(step_of(StoppedRecord{12, 0, 0, "SIGINT", false, 0}), 12);
}

TEST(MetricsRecords, UnknownTypesAreLeftAndBadOnesNamed) {
  EXPECT_FALSE(metrics_record_from_json(json{{"type", "from_a_newer_tula"}}, "m:1"));
  const auto error_of = [](const json& j) {
    try {
      metrics_record_from_json(j, "m.jsonl:7");
    } catch (const RecordError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(json{{"type", "iter"}, {"loss", 1}}).find("m.jsonl:7"), std::string::npos) << "no step";
  EXPECT_NE(error_of(json{{"type", "iter"}, {"step", "three"}}).find("m.jsonl:7"), std::string::npos);
  EXPECT_NE(error_of(json{{"step", 3}}).find("needs a \"type\""), std::string::npos);
  EXPECT_NE(error_of(json::array()).find("JSON object"), std::string::npos);
}

TEST(MetricsFile, TheWritersLinesAreReadWholeAndAsTheyArrive) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "m.jsonl").string();
  MetricsTail tail(path);
  EXPECT_TRUE(tail.read_new().empty()) << "not written yet";
  {
    MetricsWriter w(path, false);
    StartRecord s;
    s.global_batch = 64;
    w.write(s);
    IterRecord i;
    i.step = 1;
    w.write(i);
  }
  const auto first = tail.read_new();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_GT(std::get<StartRecord>(first[0]).time, 1.6e9) << "the writer stamps the time";
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"type":"iter","step":2})" "\n" R"({"type":"iter","st)";  // the second still being written
  }
  auto next = tail.read_new();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(std::get<IterRecord>(next[0]).step, 2);
  {
    // The writer was killed mid-line; a relaunch appends after what it left.
    MetricsWriter w(path, true);
    IterRecord i;
    i.step = 3;
    w.write(i);
    i.step = 4;
    w.write(i);
  }
  next = tail.read_new();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(std::get<IterRecord>(next[0]).step, 4);
  EXPECT_EQ(tail.skipped_lines(), 1);
  EXPECT_NE(tail.first_problem().find("m.jsonl:4"), std::string::npos) << tail.first_problem();
  EXPECT_THROW(read_metrics_file(path), RecordError) << "a whole read is strict";
}

TEST(MetricsFile, AWholeReadNamesTheBadLine) {
  std::istringstream in("{\"type\":\"iter\",\"step\":1}\n\n{\"type\":\"iter\"\n");
  try {
    read_metrics(in, "run/metrics.jsonl");
    FAIL() << "read a broken line";
  } catch (const RecordError& e) {
    EXPECT_NE(std::string(e.what()).find("run/metrics.jsonl:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_metrics_file("/nonexistent/metrics.jsonl"), RecordError);
}

}  // namespace
}  // namespace tula::records
