#include "predict/allreduce_model.hpp"

#include <set>

#include <fmt/format.h>

#include "predict/error.hpp"

namespace tula::predict {

int64_t bucket_count(int64_t gradient_bytes, const BucketSettings& b) {
  if (gradient_bytes <= b.first_bucket_bytes) return 1;
  return 1 + (gradient_bytes - b.first_bucket_bytes + b.bucket_bytes - 1) / b.bucket_bytes;
}

int64_t last_bucket_bytes(int64_t gradient_bytes, const BucketSettings& b) {
  if (gradient_bytes <= b.first_bucket_bytes) return gradient_bytes;
  const int64_t rest = (gradient_bytes - b.first_bucket_bytes) % b.bucket_bytes;
  return rest > 0 ? rest : b.bucket_bytes;
}

BucketLayout bucket_layout_of(const ModelInfo& model, const BucketSettings& b) {
  if (!model.bucket_bytes.empty()) {
    return {static_cast<int64_t>(model.bucket_bytes.size()), model.bucket_bytes.back()};
  }
  return {bucket_count(model.gradient_bytes, b), last_bucket_bytes(model.gradient_bytes, b)};
}

AllreduceModel fit_allreduce(const std::vector<AllreduceSample>& samples) {
  std::set<std::pair<int64_t, int64_t>> distinct;
  for (const auto& s : samples) distinct.insert({s.workers, s.bytes});
  if (static_cast<int>(distinct.size()) < kMinAllreducePoints) {
    throw FitError(fmt::format("samples.allreduce: {} distinct (workers, bytes) points; at least {} are needed",
                               distinct.size(), kMinAllreducePoints));
  }
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& s = samples[static_cast<size_t>(i)];
    const double w = static_cast<double>(s.workers);
    x(i, 0) = 2 * (w - 1);
    x(i, 1) = 2 * (w - 1) / w * static_cast<double>(s.bytes);
    y(i) = median(s.seconds);
  }
  AllreduceModel m;
  m.params = weighted_least_squares(x, y, relative_weights(y), {"alpha", "inv_bw"}, "samples.allreduce");
  if (m.params.value(0) < 0) {
    const std::string note = fmt::format(
        "allreduce: fitted latency {:g} s is negative; held at 0 and the bandwidth refitted", m.params.value(0));
    auto bw = weighted_least_squares(x.col(1), y, relative_weights(y), {"inv_bw"}, "samples.allreduce");
    m.params.value << 0.0, bw.value(0);
    m.params.cov = Eigen::Matrix2d::Zero();
    m.params.cov(1, 1) = bw.cov(0, 0);
    m.params.dof = bw.dof;
    m.params.residual_sd = bw.residual_sd;
    m.notes.push_back(note);
  }
  if (!(m.params.value(1) > 0)) {
    throw FitError(fmt::format("samples.allreduce: allreduce time does not grow with message size (fitted "
                               "1/bandwidth {:f} s/byte); measure larger messages",
                               m.params.value(1)));
  }
  return m;
}

nlohmann::json to_json(const AllreduceModel& m) {
  return {{"params", to_json(m.params)}, {"bandwidth_bytes_per_s", m.bandwidth()}, {"notes", m.notes}};
}

AllreduceModel allreduce_model_from_json(const nlohmann::json& j, const std::string& path) {
  AllreduceModel m;
  m.params = model_params_from_json(j, path, {"alpha", "inv_bw"});
  m.notes = j.value("notes", std::vector<std::string>{});
  return m;
}

}  // namespace tula::predict
