#include "train/metrics.hpp"

#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace tula::train {

MetricsWriter::MetricsWriter(const std::string& path, bool append) {
  if (path.empty()) return;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  out_.open(path, append ? std::ios::app : std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot open metrics file " + path + " for writing");
}

void MetricsWriter::write(nlohmann::json record) {
  if (!out_.is_open()) return;
  // Wall-clock seconds since the epoch on every record: whoever watches the
  // run (tula tune) places records on its own timeline across restarts.
  record["time"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  out_ << record.dump() << '\n';
  out_.flush();
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace tula::train
