// `--resources local`: this machine as a one-type catalog, so the planner
// chooses worker counts and per-worker batches that fit here exactly as it
// chooses machine types and node counts from a cloud catalog.
#pragma once
#include <string>

#include "plan/catalog.hpp"
#include "predict/profile.hpp"

namespace tula::plan {

// The price a local job is billed at unless told otherwise, per node-hour: a
// 2-vCPU cloud machine's order of magnitude (stated in every report).
inline constexpr double kDefaultLocalPricePerHour = 0.10;

// The profiled machine (its cores bound the workers, its memory the batch),
// one node, at `price_per_hour` per node-hour.
Catalog local_catalog(const predict::Profile& profile, double price_per_hour = kDefaultLocalPricePerHour,
                      const std::string& currency = "USD");

}  // namespace tula::plan
