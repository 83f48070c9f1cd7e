// What a job's tune process writes into its directory, as the server reads
// it: report.json (plan, choice, predicted against measured, re-plans),
// tune.json (the phase, read with records/tune_state.hpp) and metrics.jsonl (steps and evaluations). The files
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
#include <vector>

#include <nlohmann/json.hpp>

#include "records/metrics_records.hpp"
#include "records/tune_report.hpp"

namespace tula::service {

// report.json per job directory, parsed again only when the file changed.
class ReportCache {
 public:
  // nullptr while the job has none (or it cannot be read).
  std::shared_ptr<const records::TuneReport> get(const std::string& out_dir);
  void forget(const std::string& out_dir);

 private:
  struct Entry {
    std::filesystem::file_time_type mtime;
    uintmax_t size = 0;
    std::shared_ptr<const records::TuneReport> report;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

// The job's metrics records with a step above `since` (steps, evaluations,
// epochs, resizes; the start records have no step), at most `limit` of them,
// oldest first, whole steps only; `next` is the step to ask from for the rest.
struct MetricsPage {
  std::vector<records::MetricsRecord> records;
  int64_t next = -1;
  bool more = false;
};
MetricsPage read_metrics_page(const std::string& out_dir, int64_t since, size_t limit);

}  // namespace tula::service
