#include "service/job_files.hpp"

#include <fstream>

namespace tula::service {

namespace fs = std::filesystem;
using nlohmann::json;

std::shared_ptr<const json> ReportCache::get(const std::string& out_dir) {
  const fs::path path = fs::path(out_dir) / "report.json";
  std::error_code ec;
  const auto mtime = fs::last_write_time(path, ec);
  if (ec) return nullptr;
  const auto size = fs::file_size(path, ec);
  if (ec) return nullptr;
  std::lock_guard lock(mutex_);
  auto& entry = entries_[out_dir];
  if (entry.report && entry.mtime == mtime && entry.size == size) return entry.report;
  std::ifstream in(path);
  try {
    auto parsed = std::make_shared<json>(json::parse(in));
    entry = {mtime, size, parsed};
  } catch (const json::exception&) {
    // Replaced while we read it: the previous version stands until the next call.
  }
  return entry.report;
}

void ReportCache::forget(const std::string& out_dir) {
  std::lock_guard lock(mutex_);
  entries_.erase(out_dir);
}

std::string tune_phase(const std::string& out_dir) {
  std::ifstream in(fs::path(out_dir) / "tune.json");
  if (!in) return "";
  try {
    return json::parse(in).value("phase", "");
  } catch (const json::exception&) {
    return "";
  }
}

std::vector<json> LineTail::read_new() {
  std::vector<json> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: a line still being written
    offset_ += line.size() + 1;
    try {
      out.push_back(json::parse(line));
    } catch (const json::exception&) {
    }
  }
  return out;
}

json read_metrics(const std::string& out_dir, int64_t since, size_t limit) {
  LineTail tail((fs::path(out_dir) / "metrics.jsonl").string());
  json records = json::array();
  int64_t next = since;
  bool more = false;
  for (auto& r : tail.read_new()) {
    const int64_t step = r.value("step", int64_t{-1});
    if (step <= since) continue;
    if (records.size() >= limit && step > next) {  // whole steps only: a step's records stay together
      more = true;
      break;
    }
    next = std::max(next, step);
    records.push_back(std::move(r));
  }
  return {{"records", records}, {"next", next}, {"more", more}};
}

}  // namespace tula::service
