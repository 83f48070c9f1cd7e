// This process's memory, as the metrics records report it. The records
// themselves and their writer are in records/metrics_file.hpp.
#pragma once
#include <cstdint>

namespace tula::train {

// Peak resident set size of this process in bytes (getrusage).
int64_t peak_rss_bytes();

}  // namespace tula::train
