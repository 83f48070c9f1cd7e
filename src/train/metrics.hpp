// Metrics as JSON lines (one object per line, flushed as written) so a run can
// be followed live (`tail -f`) and read back by the profiler and by analysis scripts.
#pragma once
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace tula::train {

class MetricsWriter {
 public:
  // Empty path: writes nothing. Appends when `append` (a resumed run).
  MetricsWriter(const std::string& path, bool append);
  void write(nlohmann::json record);  // by value: the time stamp goes into it, not into a copy
  bool enabled() const { return out_.is_open(); }

 private:
  std::ofstream out_;
};

// Peak resident set size of this process in bytes (getrusage).
int64_t peak_rss_bytes();

}  // namespace tula::train
