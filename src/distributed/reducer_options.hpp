// How gradients are grouped for allreduce. Plain data, no LibTorch.
#pragma once
#include <cstdint>

namespace tula::distributed {

struct ReducerOptions {
  int64_t bucket_bytes = 25LL * 1024 * 1024;  // DDP's default bucket_cap_mb
  // DDP starts with a small bucket so the first allreduce begins early.
  int64_t first_bucket_bytes = 1LL * 1024 * 1024;

  // Throws std::invalid_argument naming the option.
  void validate() const;
};

}  // namespace tula::distributed
