#include "service/job_files.hpp"

#include <fstream>

#include "records/metrics_file.hpp"
#include "records/record_error.hpp"

namespace tula::service {

namespace fs = std::filesystem;
using nlohmann::json;

std::shared_ptr<const records::TuneReport> ReportCache::get(const std::string& out_dir) {
  const fs::path path = fs::path(out_dir) / "report.json";
  std::error_code ec;
  const auto mtime = fs::last_write_time(path, ec);
  if (ec) return nullptr;
  const auto size = fs::file_size(path, ec);
  if (ec) return nullptr;
  std::lock_guard lock(mutex_);
  auto& entry = entries_[out_dir];
  if (entry.report && entry.mtime == mtime && entry.size == size) return entry.report;
  try {
    if (auto report = records::read_tune_report(out_dir)) {
      entry = {mtime, size, std::make_shared<const records::TuneReport>(std::move(*report))};
    }
  } catch (const records::RecordError&) {
    // Replaced while we read it: the previous version stands until the next call.
  }
  return entry.report;
}

void ReportCache::forget(const std::string& out_dir) {
  std::lock_guard lock(mutex_);
  entries_.erase(out_dir);
}

MetricsPage read_metrics_page(const std::string& out_dir, int64_t since, size_t limit) {
  records::MetricsTail tail((fs::path(out_dir) / "metrics.jsonl").string());
  MetricsPage page;
  page.next = since;
  for (auto& r : tail.read_new()) {
    const auto step = records::step_of(r);
    if (!step || *step <= since) continue;
    if (page.records.size() >= limit && *step > page.next) {  // a step's records stay together
      page.more = true;
      break;
    }
    page.next = std::max(page.next, *step);
    page.records.push_back(std::move(r));
  }
  return page;
}

}  // namespace tula::service
