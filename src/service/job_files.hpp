// What a job's tune process writes into its directory, as the server reads
// it: report.json (plan, choice, predicted against measured, re-plans),
// tune.json (the phase) and metrics.jsonl (steps and evaluations). The files
// are replaced atomically or appended by line, so a reader sees a whole
// version or the previous one; a half-written last line is left for later.
// No LibTorch here.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace tula::service {

// report.json per job directory, parsed again only when the file changed.
class ReportCache {
 public:
  // nullptr while the job has none (or it cannot be read).
  std::shared_ptr<const nlohmann::json> get(const std::string& out_dir);
  void forget(const std::string& out_dir);

 private:
  struct Entry {
    std::filesystem::file_time_type mtime;
    uintmax_t size = 0;
    std::shared_ptr<const nlohmann::json> report;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

// tune.json's "phase" (new, profiled, planned, training, done); "" before it exists.
std::string tune_phase(const std::string& out_dir);

// The complete lines appended to a file since the last call.
class LineTail {
 public:
  explicit LineTail(std::string path) : path_(std::move(path)) {}
  std::vector<nlohmann::json> read_new();  // malformed lines are skipped

 private:
  std::string path_;
  uintmax_t offset_ = 0;
};

// The job's metrics records (steps, evaluations, epochs, resizes) with a step
// above `since`, at most `limit` of them, oldest first; "next" is the step to
// ask from for the rest.
nlohmann::json read_metrics(const std::string& out_dir, int64_t since, size_t limit);

}  // namespace tula::service
