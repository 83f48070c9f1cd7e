#include "tune/job_history.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/engine_names.hpp"
#include "common/fd.hpp"
#include "predict/stats.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::runtime_error file_error(const std::string& what, const std::string& path) {
  return std::runtime_error(fmt::format("job history {}: cannot {}: {}", path, what, std::strerror(errno)));
}

std::optional<HistoryEntry> entry_from(const std::string& line) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("setup") || !j["setup"].is_string() || !j.contains("reference_epochs") ||
      !j["reference_epochs"].is_number()) {
    return std::nullopt;
  }
  HistoryEntry e;
  e.setup = j["setup"].get<std::string>();
  e.reference_epochs = j["reference_epochs"].get<double>();
  if (!(e.reference_epochs > 0) || !std::isfinite(e.reference_epochs)) return std::nullopt;
  e.epochs = j.value("epochs", 0.0);
  e.global_batch = j.value("global_batch", int64_t{0});
  if (j.contains("curve") && !j["curve"].is_string()) return std::nullopt;
  e.job = j.value("job", std::string());
  e.finished = j.value("finished", std::string());
  e.curve = j.value("curve", std::string());
  return e;
}

double sample_sd(const std::vector<double>& v) {
  double mean = 0;
  for (const double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (const double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// The lines of `setup`, oldest first, each curve at its latest line only.
std::vector<HistoryEntry> curves_of(const std::vector<HistoryEntry>& all, const std::string& setup) {
  std::vector<HistoryEntry> out;
  std::set<std::string> seen;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->setup != setup) continue;
    if (!it->curve.empty() && !seen.insert(it->curve).second) continue;
    out.push_back(*it);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

std::string history_curve(uint64_t seed, const std::vector<CurveLaunch>& launches) {
  std::string out = fmt::format("seed {}", seed);
  for (const auto& l : launches) {
    out += fmt::format("; {} x {} from step {}", l.workers, l.global_batch / std::max<int64_t>(1, l.workers),
                       l.first_step);
  }
  return out;
}

std::string history_setup(const TuneOptions& o, const std::string& model_digest) {
  // nlohmann::json orders object keys, so the dump is canonical.
  json j = {{"model", o.job.model},
            {"dataset", o.job.dataset},
            {"data_dir", o.job.data_dir},
            {"synthetic_size", o.job.synthetic_size},
            {"image_size", o.job.image_size},
            {"augment", o.job.augment},
            {"target_accuracy", o.job.target_accuracy},
            {"validation_size", o.watch.validation_size},
            {"eval_every_epochs", o.watch.eval_every_epochs},
            {"optimizer", o.training.optimizer},
            {"lr", o.training.lr},
            {"reference_batch", o.training.reference_batch},
            {"lr_scaling", o.training.lr_scaling},
            {"momentum", o.training.momentum},
            {"weight_decay", o.training.weight_decay},
            {"warmup_epochs", o.training.warmup_epochs},
            {"noise_growth", o.replay.noise_growth},
            {"epochs_floor", o.replay.epochs_floor}};
  // Lines written before the warmup was left out at the reference batch
  // trained with it at every batch: they keep matching jobs that still do.
  if (!o.training.warmup_at_reference) j["warmup_above_reference_only"] = true;
  // Lines written before AGS took the noise gain alone at or below the
  // reference batch trained at about 0.93 of the tuned rate there.
  if (o.training.optimizer == "ags") j["ags_gain_alone_at_reference"] = true;
  // Curves read on the averaged weights cross earlier than the weights' own.
  if (o.watch.eval_average > 0) j["eval_average"] = o.watch.eval_average;
  if (!model_digest.empty()) j["model_digest"] = model_digest;
  return j.dump();
}

std::string model_digest(const TuneOptions& o) {
  return common::is_script_model_path(o.job.model) ? predict::file_digest(o.job.model) : "";
}

std::string default_history_path(const predict::EnvGetter& env) {
  constexpr const char* kFile = "job-history.jsonl";
  // $TULA_CACHE_DIR holds the profiles themselves; otherwise they lie in
  // .../tula/profiles and the history beside that folder.
  const auto dir = env("TULA_CACHE_DIR");
  const fs::path profiles(predict::profile_cache_dir(env));
  return ((dir && !dir->empty()) ? profiles / kFile : profiles.parent_path() / kFile).string();
}

JobHistory::JobHistory(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw std::invalid_argument("job history: empty path");
}

std::vector<HistoryEntry> JobHistory::entries() const {
  skipped_ = 0;
  std::vector<HistoryEntry> out;
  std::error_code ec;
  if (!fs::exists(path_, ec)) return out;
  std::ifstream in(path_);
  if (!in) throw file_error("read it", path_);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (auto e = entry_from(line)) {
      out.push_back(std::move(*e));
    } else {
      ++skipped_;
    }
  }
  if (in.bad()) throw file_error("read it", path_);
  return out;
}

EpochsPrior JobHistory::prior_for(const std::string& setup) const {
  const auto all = entries();
  const auto curves = curves_of(all, setup);
  const auto lines = std::count_if(all.begin(), all.end(), [&](const HistoryEntry& e) { return e.setup == setup; });
  std::vector<double> logs;
  for (const auto& e : curves) logs.push_back(std::log(e.reference_epochs));
  if (logs.empty()) return stated_epochs_prior();
  if (logs.size() > kHistoryJobsUsed) logs.erase(logs.begin(), logs.end() - kHistoryJobsUsed);
  const auto n = static_cast<double>(logs.size());
  const double spread = logs.size() >= 3 ? std::max(kHistoryLogSdFloor, sample_sd(logs)) : kHistoryLogSdAssumed;
  EpochsPrior p;
  p.unit = EpochsPrior::Unit::ReferenceEpochs;
  p.epochs = std::exp(predict::median(logs));
  p.log_sd = spread * std::sqrt(1 + 1 / n);
  p.jobs = static_cast<int>(logs.size());
  const auto repeats = static_cast<size_t>(lines) - curves.size();
  p.source = fmt::format("{} earlier job{} of this setup ({}{})", p.jobs, p.jobs == 1 ? "" : "s", path_,
                         repeats == 0 ? std::string()
                                      : fmt::format("; {} more line{} repeating a curve counted once", repeats,
                                                    repeats == 1 ? "" : "s"));
  return p;
}

void JobHistory::append(const HistoryEntry& entry) const {
  const fs::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) throw std::runtime_error("job history " + path_ + ": cannot create its directory: " + ec.message());
  const common::Fd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) throw file_error("open it to append", path_);
  // The lock keeps two jobs' lines whole where one write might be split.
  if (::flock(fd.get(), LOCK_EX) != 0) throw file_error("lock it", path_);
  const std::string line = to_json(entry).dump() + "\n";
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd.get(), line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw file_error("append to it", path_);
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) throw file_error("sync it", path_);
}

nlohmann::json to_json(const HistoryEntry& e) {
  return {{"setup", e.setup}, {"reference_epochs", e.reference_epochs}, {"epochs", e.epochs},
          {"global_batch", e.global_batch}, {"job", e.job}, {"finished", e.finished}, {"curve", e.curve}};
}

}  // namespace tula::tune
