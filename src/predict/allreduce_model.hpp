// Ring allreduce time (Patarasuk & Yuan 2009; Thakur et al. 2005): N workers
// pass 2(N-1) chunks of M/N bytes (reduce-scatter then allgather), each step
// paying a latency alpha, so
//   t_a(N, M) = 2(N-1) alpha + 2(N-1)/N * M / BW.
// The engine allreduces gradients in buckets (first 1 MiB, then 25 MiB, as
// PyTorch DDP), paying the latency term once per bucket.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::predict {

struct AllreduceModel {
  ParamBlock params;  // {"alpha": s per ring step, "inv_bw": s per byte}
  std::vector<std::string> notes;

  double alpha() const { return params.value(0); }
  double bandwidth() const { return 1.0 / params.value(1); }  // bytes/s

  static double ring(double workers, double bytes, double alpha, double inv_bw) {
    if (workers <= 1) return 0.0;
    return 2 * (workers - 1) * alpha + 2 * (workers - 1) / workers * bytes * inv_bw;
  }
  // All of a model's gradient, in `buckets` messages totalling `bytes`.
  static double bucketed(double workers, double bytes, double buckets, double alpha, double inv_bw) {
    if (workers <= 1) return 0.0;
    return buckets * 2 * (workers - 1) * alpha + 2 * (workers - 1) / workers * bytes * inv_bw;
  }

  // One level of a hierarchical allreduce: its latency per ring step and
  // seconds per byte.
  struct Link {
    double alpha = 0, inv_bw = 0;
  };
  // Hierarchical (two-level) allreduce of `messages` messages totalling
  // `bytes`, `per_node` devices on each of `nodes` nodes: a reduce-scatter
  // inside each node over its link, an allreduce across nodes of each
  // device's 1/per_node shard (the node's devices at once, so the node's
  // network carries the whole message: 2(nodes-1)/nodes x bytes), and an
  // allgather inside the node. The phases are taken one after another (no
  // pipelining between them), so this bounds the time from above where the
  // collective library overlaps them.
  static double hierarchical(double nodes, double per_node, double bytes, double messages, Link intra, Link inter) {
    double t = 0;
    if (per_node > 1) {
      t += messages * 2 * (per_node - 1) * intra.alpha + 2 * (per_node - 1) / per_node * bytes * intra.inv_bw;
    }
    if (nodes > 1) t += messages * 2 * (nodes - 1) * inter.alpha + 2 * (nodes - 1) / nodes * bytes * inter.inv_bw;
    return t;
  }
};

// Buckets the engine makes of `gradient_bytes` (first bucket, then full ones).
int64_t bucket_count(int64_t gradient_bytes, const BucketSettings& buckets);
// The bytes of the last bucket backward fills: the first layers' gradients,
// what is left after the first bucket and the full ones (all of them where
// one bucket holds the whole gradient).
int64_t last_bucket_bytes(int64_t gradient_bytes, const BucketSettings& buckets);

// The engine's buckets as the predictor needs them: how many (each pays the
// ring's latency) and the last one's bytes (never hidden behind backward).
struct BucketLayout {
  int64_t count = 1;
  int64_t last_bytes = 0;
};
// The profile's recorded buckets where it has them, else reckoned from the
// byte caps as if a parameter could split (profiles before the record; for
// small_cnn that puts 0.64 MB in the last bucket, which holds its two convs'
// 75 KB).
BucketLayout bucket_layout_of(const ModelInfo& model, const BucketSettings& buckets);

// Weighted (relative-error) least squares on the features 2(N-1) and
// 2(N-1)/N M. A negative latency is held at zero with a note; a bandwidth
// term that is not positive is a FitError (time must grow with message size).
AllreduceModel fit_allreduce(const std::vector<AllreduceSample>& samples);

nlohmann::json to_json(const AllreduceModel& m);
AllreduceModel allreduce_model_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
