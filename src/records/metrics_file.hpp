// metrics.jsonl on disk: one writer that appends records as lines (flushed as
// written, so a run can be followed live) and one reader that takes the lines
// completed since its last call, for a file still being written, or a whole
// file at once. No LibTorch here.
#pragma once
#include <cstdint>
#include <cstdio>
#include <istream>
#include <string>
#include <vector>

#include "records/metrics_records.hpp"

namespace tula::records {

class MetricsWriter {
 public:
  // Empty path: writes nothing. Appends when `append` (a resumed run).
  MetricsWriter(const std::string& path, bool append);
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  // Stamps the record with the wall-clock time (seconds since the Unix
  // epoch): whoever watches the run places records on its own timeline.
  void write(MetricsRecord record);
  bool enabled() const { return file_ != nullptr; }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

// The records completed since the last call, for a file that another process
// appends to. A line that is not a record (a writer killed mid-line, then a
// relaunch appending after it) is skipped and counted: one bad line does not
// make the rest of a job unreadable.
class MetricsTail {
 public:
  explicit MetricsTail(std::string path) : path_(std::move(path)) {}
  // Nothing when the file does not exist yet.
  std::vector<MetricsRecord> read_new();
  int64_t skipped_lines() const { return skipped_; }
  const std::string& first_problem() const { return first_problem_; }  // path:line: why

 private:
  std::string path_;
  uint64_t offset_ = 0;
  int64_t line_number_ = 0;
  int64_t skipped_ = 0;
  std::string first_problem_;
};

// Every record of a whole stream (`name` names it in errors). A line that is
// not a record throws RecordError naming the line.
std::vector<MetricsRecord> read_metrics(std::istream& in, const std::string& name);
// The same for a file; RecordError when it cannot be opened.
std::vector<MetricsRecord> read_metrics_file(const std::string& path);

}  // namespace tula::records
