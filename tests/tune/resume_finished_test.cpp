// `tula tune --resume` on a recorded job that had finished
// (bench/results/watch_cases/resize): every file is left as it was; where
// the process had ended between marking the job done and writing its final
// report, the report is made from the job's own records. No worker starts
// (the binary given is /bin/true).
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "helpers/temp_dir.hpp"
#include "tune/runner.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRecorded = fs::path(TULA_SOURCE_DIR) / "bench" / "results" / "watch_cases" / "resize";

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string gunzip(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path.string());
  std::string out;
  char buffer[1 << 16];
  for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// The recorded job as its directory was: tune.json, report.json, profile.json, metrics.jsonl.
fs::path copy_of_recorded_job(const testing::TempDir& dir) {
  const fs::path job = dir.path() / "job";
  fs::create_directories(job / "logs");
  for (const char* name : {"tune.json", "report.json", "profile.json"}) fs::copy_file(kRecorded / name, job / name);
  std::ofstream(job / "metrics.jsonl", std::ios::binary) << gunzip(kRecorded / "metrics.jsonl.gz");
  return job;
}

std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = read_bytes(e.path());
  }
  return out;
}

TuneResult resume(const fs::path& job) {
  TuneOptions o;
  o.resume = true;
  o.job.out_dir = job.string();
  o.job.model.clear();  // as `tula tune --resume DIR` leaves them: the job's own
  o.job.dataset.clear();
  o.progress = "none";
  return run_tune(o, "/bin/true", [](const std::vector<std::string>&, const auto&) {
    throw std::runtime_error("a finished job measures no profile");
  });
}

TEST(ResumeFinished, AFinishedJobIsLeftAsItWas) {
  testing::TempDir dir;
  const fs::path job = copy_of_recorded_job(dir);
  ASSERT_EQ(json::parse(read_bytes(job / "tune.json"))["phase"], "done");
  const auto before = files_of(job);
  const TuneResult r = resume(job);
  EXPECT_EQ(r.state, records::TuneOutcome::Succeeded);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(files_of(job), before) << "a file was written; report.json now:\n" << read_bytes(job / "report.json");
}

// The report as the last periodic save left it: still running.
TEST(ResumeFinished, AFinishedJobWithoutItsFinalReportGetsItFromItsRecords) {
  testing::TempDir dir;
  const fs::path job = copy_of_recorded_job(dir);
  const json finished = json::parse(read_bytes(job / "report.json"));
  json cut = finished;
  cut["state"] = "running";
  cut.erase("exit_code");
  cut.erase("reason");
  std::ofstream(job / "report.json") << cut.dump(2);

  const TuneResult r = resume(job);
  EXPECT_EQ(r.state, records::TuneOutcome::Succeeded) << r.reason;
  const json report = json::parse(read_bytes(job / "report.json"));
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_EQ(report["reason"], finished["reason"]);
  for (const char* key : {"best_accuracy", "final_accuracy", "epochs", "steps"}) {
    EXPECT_EQ(report["measured"][key], finished["measured"][key]) << key;
  }
}

}  // namespace
}  // namespace tula::tune
