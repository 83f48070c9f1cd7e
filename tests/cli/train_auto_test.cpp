// `tula train --batch-size auto --nproc auto` as a user runs it: the choice
// and its reason printed before training, the quick profile measured once and
// cached, reused by the next run, measured again with --reprofile, and the
// workers training at the chosen numbers (their metrics say which).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::cli {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::expect_tula_fails;
using testing::run_on_free_port;
using testing::tula_binary;

const std::string kData = " --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 256 --progress none";

struct Choice {
  int64_t workers = 0, batch = 0, accumulation = 0;
};

// The numbers of the "chose N workers x batch B per worker x K accumulation
// steps" line; zeros when there is none.
Choice printed_choice(const std::string& output) {
  std::smatch m;
  Choice c;
  if (std::regex_search(output, m,
                        std::regex(R"(chose (\d+) workers? x batch (\d+) per worker x (\d+) accumulation steps?)"))) {
    c.workers = std::stoll(m[1]);
    c.batch = std::stoll(m[2]);
    c.accumulation = std::stoll(m[3]);
  }
  return c;
}

// The "start" record of a --metrics file: what the workers trained with.
nlohmann::json start_record(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("type", "") == "start") return j;
  }
  return nullptr;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<fs::path> cached_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

CommandResult train(const testing::TempDir& cache, const std::string& args, const std::string& metrics) {
  return run_on_free_port(
      [&](const std::string& port) {
        return "TULA_CACHE_DIR=" + cache.str() + " " + tula_binary() + " train " + args + kData +
               " --epochs 1 --max-steps 3 --metrics " + metrics + " --master-port " + port;
      },
      300);
}

void expect_trained_as_chosen(const CommandResult& r, const std::string& metrics, const Choice& c) {
  const auto start = start_record(metrics);
  ASSERT_TRUE(start.is_object()) << "no start record in " << metrics << "\n" << r.output;
  EXPECT_EQ(start["workers"].get<int64_t>(), c.workers) << r.output;
  EXPECT_EQ(start["batch_size"].get<int64_t>(), c.batch) << r.output;
  EXPECT_EQ(start["accumulation_steps"].get<int64_t>(), c.accumulation) << r.output;
  EXPECT_EQ(start["global_batch"].get<int64_t>(), c.workers * c.batch * c.accumulation);
}

TEST(TrainAuto, ChoosesBeforeTrainingCachesTheProfileAndReusesIt) {
  const testing::TempDir cache("tula-auto-cache");
  const testing::TempDir out("tula-auto-out");

  auto r = train(cache, "--batch-size auto --nproc auto", out.file("m1.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tula: auto: measuring a quick profile of small_cnn on 1x28x28 input, 256 training and "
                          "51 test samples (no cached profile"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("run in this process"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("and cached it at " + cache.str()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("profile measured now"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tula: auto: predicted epoch time "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tula: auto: why: Chosen (knee"), std::string::npos) << r.output;
  EXPECT_EQ(count(r.output, "tula: auto: chose "), 1u) << "chosen once, by the launching process\n" << r.output;
  const auto chosen = printed_choice(r.output);
  ASSERT_GE(chosen.workers, 1) << r.output;
  EXPECT_NE(r.output.find("training as if given --nproc " + std::to_string(chosen.workers) + " --batch-size " +
                          std::to_string(chosen.batch) + " --accumulation-steps " +
                          std::to_string(chosen.accumulation)),
            std::string::npos)
      << r.output;
  // Printed before anything trained: the workers' summary comes after.
  const auto summary = r.output.find("{\"epochs\"");
  ASSERT_NE(summary, std::string::npos) << r.output;
  EXPECT_LT(r.output.find("tula: auto: why:"), summary) << r.output;
  expect_trained_as_chosen(r, out.file("m1.jsonl"), chosen);

  const auto files = cached_files(cache.path());
  ASSERT_EQ(files.size(), 1u) << "one profile, no temporary file";
  EXPECT_TRUE(std::regex_match(files[0].filename().string(), std::regex(R"(small_cnn-1x28x28-[0-9a-f]{12}\.json)")))
      << files[0];
  const auto cached_text = testing::read_text(files[0]);
  EXPECT_TRUE(nlohmann::json::parse(cached_text).contains("measurement"));

  // The next run reuses it, here for one worker in this process.
  r = train(cache, "--batch-size auto", out.file("m2.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tula: auto: reused the cached profile " + files[0].string()), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("profile from the cache"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("measuring"), std::string::npos) << r.output;
  const auto single = printed_choice(r.output);
  EXPECT_EQ(single.workers, 1) << "no --nproc: one worker\n" << r.output;
  expect_trained_as_chosen(r, out.file("m2.jsonl"), single);
  EXPECT_EQ(testing::read_text(files[0]), cached_text) << "a reused profile is not rewritten";
}

TEST(TrainAuto, KeepsWhatIsGivenAndReprofileMeasuresAgain) {
  const testing::TempDir cache("tula-auto-cache");
  const testing::TempDir out("tula-auto-out");

  // Workers fixed, batch chosen.
  auto r = train(cache, "--nproc 1 --batch-size auto", out.file("m1.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("with --nproc 1 as given"), std::string::npos) << r.output;
  const auto first = printed_choice(r.output);
  EXPECT_EQ(first.workers, 1) << r.output;
  expect_trained_as_chosen(r, out.file("m1.jsonl"), first);
  const auto files = cached_files(cache.path());
  ASSERT_EQ(files.size(), 1u);
  const auto before = testing::read_text(files[0]);

  // Batch fixed, workers chosen, the profile measured again.
  r = train(cache, "--nproc auto --batch-size 16 --reprofile", out.file("m2.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("measuring a quick profile"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(--reprofile)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("with --batch-size 16 --accumulation-steps 1 as given"), std::string::npos) << r.output;
  const auto second = printed_choice(r.output);
  EXPECT_EQ(second.batch, 16);
  EXPECT_EQ(second.accumulation, 1);
  expect_trained_as_chosen(r, out.file("m2.jsonl"), second);
  ASSERT_EQ(cached_files(cache.path()).size(), 1u) << "the same key, the same file";
  EXPECT_NE(testing::read_text(files[0]), before) << "--reprofile replaced the cached profile";
}

TEST(TrainAuto, BadValuesAreRefusedBeforeAnythingRuns) {
  expect_tula_fails("train --batch-size autox" + kData, "--batch-size: 'autox' is neither a whole number nor 'auto'");
  expect_tula_fails("train --nproc autox" + kData, "--nproc: 'autox' is neither a whole number nor 'auto'");
  expect_tula_fails("train --batch-size 0" + kData, "--batch-size must be at least 1");
  expect_tula_fails("train --reprofile" + kData, "--reprofile applies to --batch-size auto or --nproc auto only");
  expect_tula_fails("train --batch-size auto --batch-schedule 0:64" + kData, "--batch-schedule");
  expect_tula_fails("train --batch-size auto --price-per-hour=-1" + kData, "--price-per-hour must be non-negative");
}

}  // namespace
}  // namespace tula::cli
