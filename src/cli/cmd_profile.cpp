// `tula profile`: short measured trials of a model on this machine, written
// as a versioned profile JSON that `tula predict`, `plan` and `simulate` read.
#include <malloc.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/text.hpp"
#include "profile/cached_profile.hpp"
#include "profile/grid.hpp"
#include "profile/profiler.hpp"
#include "profile/summary.hpp"

namespace tula::cli {
namespace {

struct ProfileCommand {
  profile::ProfileOptions options;
  std::string batch_sizes = "auto";
  std::string workers;
  std::string input_shape;
  double memory_limit_gib = 0;
  std::string out = "profile.json";
  bool cache = false;      // with --quick: from the profile cache, or measured and cached
  bool reprofile = false;  // with --cache: measure even when cached
};

// The cached profile copied to --out, and the line saying so.
void write_cached(const profile::CachedProfile& cached, const std::string& out, const profile::Log& log) {
  std::ifstream in(cached.path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read the cached profile " + cached.path);
  common::write_file_atomically(out, text.str());
  log("wrote " + out + " (" + (cached.from_cache ? "from the cache" : "measured now and cached") + ": " + cached.path +
      ")");
}

void check_cacheable(const ProfileCommand& cmd) {
  if (!cmd.options.quick) throw std::invalid_argument("--cache keeps quick profiles only: add --quick");
  if (!cmd.options.pilot_metrics.empty()) {
    throw std::invalid_argument("--cache keeps profiles without pilot metrics: drop --pilot-metrics or --cache");
  }
}

// --quick --cache: the cached profile of this model, input and machine, or one
// measured now and cached (profile/cached_profile.hpp), copied to --out; what
// happened to `log`, warnings to `warn`.
void run_cached(const ProfileCommand& cmd, const profile::Log& log, const profile::Log& warn) {
  check_cacheable(cmd);
  write_cached(profile::cached_quick_profile(cmd.options, cmd.reprofile, log, warn), cmd.out, log);
}

constexpr const char* kFooter =
    "\nMeasures, each after warm-up steps and repeated (every repeat is kept):\n"
    "  compute      forward+backward and optimizer time per step at a geometric grid of\n"
    "               per-worker batch sizes (one worker, all cores)\n"
    "  memory       weights, gradients, optimizer state and each step's peak, counted by\n"
    "               LibTorch's allocator; activation bytes per sample\n"
    "  evaluation   forward-only time for three sample counts\n"
    "  allreduce    4 KiB up to the gradient size, for each --workers count, in worker\n"
    "               processes on loopback; and a few real data-parallel steps giving the\n"
    "               share of communication hidden behind backward\n"
    "then fits the models of docs/models.md and writes them with the samples.\n"
    "An anchor step (one worker, a mid batch) is timed before and after the compute grid; when\n"
    "the two differ by more than 10% the machine's speed drifted, and the grid is measured again.\n"
    "\n"
    "Examples:\n"
    "  tula profile --model small_cnn --dataset fashion-mnist --quick --out p.json\n"
    "  tula profile --model resnet20 --input-shape 3x32x32 --classes 10 --batch-sizes 8,16,32,64,128\n"
    "  tula profile --model small_cnn --dataset fashion-mnist --pilot-metrics run.jsonl --target-accuracy 0.85";

// The flags' values checked and turned into the profiler's options.
void prepare(ProfileCommand& cmd) {
  auto& o = cmd.options;
  if (cmd.batch_sizes != "auto") o.batch_sizes = profile::parse_int_list(cmd.batch_sizes, "--batch-sizes");
  if (!cmd.workers.empty()) o.workers = profile::parse_int_list(cmd.workers, "--workers");
  if (!cmd.input_shape.empty()) {
    o.data.input_shape = profile::parse_shape(cmd.input_shape, "--input-shape");
    if (o.data.dataset.empty()) o.data.dataset = "synthetic";
  }
  if (o.data.dataset.empty()) {
    throw std::invalid_argument("give --dataset NAME (its shape and sizes are read from it) or --input-shape CxHxW");
  }
  if (cmd.memory_limit_gib < 0) throw std::invalid_argument("--memory-limit-gib must be positive");
  if (!(o.time_budget_s >= 0)) throw std::invalid_argument("--time-budget must be 0 (none) or a positive number of seconds");
  o.memory_limit_bytes = static_cast<int64_t>(cmd.memory_limit_gib * (1LL << 30));
  profile::validate(o);
}

void run(ProfileCommand& cmd) {
  prepare(cmd);
  const auto& o = cmd.options;
  if (cmd.cache) {
    return run_cached(
        cmd, [](const std::string& line) { std::cout << line << std::endl; },
        [](const std::string& line) { std::cerr << "tula: warning: " << line << std::endl; });
  }

  const auto run = profile::run_profile(
      o, [](const std::string& line) { std::cout << line << std::endl; },
      [](const std::string& line) { std::cerr << "tula: warning: " << line << std::endl; });
  profile::write_profile(run, cmd.out);
  const auto& p = run.profile;
  std::cout << "wrote " << cmd.out << ": " << p.compute.size() << " compute, " << p.memory.size() << " memory, "
            << p.evaluation.size() << " evaluation, " << p.allreduce.size() << " allreduce and " << p.overlap.size()
            << " overlap samples in " << static_cast<int>(run.measurement.value("wall_s", 0.0) + 0.5) << " s";
  if (o.time_budget_s > 0) std::cout << " (time budget " << common::format_seconds(o.time_budget_s) << ")";
  std::cout << "\n";
  if (!run.fitted) {
    std::cerr << "tula: error: the measurements do not support a fit (the raw samples are in " << cmd.out
              << "): " << run.fit_error << std::endl;
    exit_status() = 1;
    return;
  }
  const auto& sm = run.measurement.at("static_memory");
  const auto& detail = run.measurement.at("memory_detail");
  std::cout << "measured static memory: weights "
            << common::format_bytes(sm.at("weights_bytes").get<double>()) << ", gradient buckets "
            << common::format_bytes(sm.at("gradient_buckets_bytes").get<double>()) << ", optimizer state "
            << common::format_bytes(sm.at("optimizer_state_bytes").get<double>());
  if (!detail.empty()) {
    const auto& last = detail.back();
    std::cout << "; live after forward at batch " << last.at("batch").get<int64_t>() << ": "
              << common::format_bytes(last.at("live_after_forward_bytes").get<double>() /
                                       last.at("batch").get<double>())
              << "/sample";
  }
  std::cout << "\nfitted:\n" << profile::describe_fit(*run.fitted);
  for (const auto& note : run.fitted->all_notes()) std::cout << "  note: " << note << "\n";
  std::cout.flush();
}

// The flags of `tula profile`, bound to `cmd`.
CLI::App* add_profile_flags(CLI::App& app, const std::shared_ptr<ProfileCommand>& cmd) {
  auto& o = cmd->options;
  auto* sub = app.add_subcommand("profile", "Measure a model on this machine and fit the time and memory models");
  sub->footer(kFooter);
  sub->add_option("--model", o.model, "Model from `tula models`")->capture_default_str();
  sub->add_option("--precision", o.precision,
                  "fp32, bf16 or fp16 (CUDA only): the precision the steps are timed at, as `tula train --precision` "
                  "will run them; a profile is for one")
      ->capture_default_str();
  sub->add_option("--device", o.device, "cpu, cuda or auto (CUDA where a GPU is visible): where the compute and memory trials run")
      ->capture_default_str();
  sub->add_option("--dataset", o.data.dataset, "fashion-mnist, mnist, cifar10, cifar100 or synthetic");
  sub->add_option("--data-dir", o.data.data_dir, "Directory of the data set's files (default: its usual place)");
  sub->add_option("--input-shape", cmd->input_shape, "CxHxW of synthetic input (implies --dataset synthetic)");
  sub->add_option("--classes", o.data.classes, "Classes of synthetic input")->capture_default_str();
  sub->add_option("--train-samples", o.data.train_samples, "Training samples of synthetic input (default 10000)");
  sub->add_option("--test-samples", o.data.test_samples, "Test samples of synthetic input (default train / 5)");
  sub->add_option("--image-size", o.data.image_size, "Resize to this size (0: data size, raised to the model's minimum)");
  sub->add_option("--decode-threads", o.data.decode_threads,
                  "imagefolder: threads decoding each batch, as `tula train --decode-threads` (0: min(4, hardware threads))")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("!--no-augment", o.data.augment, "Time the loader without augmentation, as `tula train --no-augment`");
  sub->add_option("--dropout", o.dropout, "Dropout of small_cnn, as `tula train --dropout`");
  sub->add_option("--batch-sizes", cmd->batch_sizes,
                  "Per-worker batch sizes (8,16,32) or 'auto': a geometric grid up to the memory limit")
      ->capture_default_str();
  sub->add_option("--max-batch-size", o.max_batch_size, "Largest batch of the automatic grid")->capture_default_str();
  sub->add_option("--memory-limit-gib", cmd->memory_limit_gib,
                  "Batches predicted to need more are not run (default: half the machine's memory)");
  sub->add_option("--workers", cmd->workers, "Worker counts for the communication trials (default 2, 4, ... cores)");
  sub->add_flag("--quick", o.quick, "Few batch sizes, repeats and message sizes: well under a minute for small models");
  sub->add_option("--time-budget", o.time_budget_s,
                  "Seconds the profile may take (0: no budget): fewer batches, repeats and worker counts to fit, "
                  "never fewer than the fits need")
      ->capture_default_str();
  sub->add_option("--warmup", o.warmup, "Warm-up steps before each measurement (default 1 quick, 3 otherwise)");
  sub->add_option("--repeats", o.repeats, "Measured repeats of each trial (default 3 quick, 7 otherwise)");
  sub->add_option("--threads", o.threads, "Intra-op threads of the one-worker trials (0: all cores)")->capture_default_str();
  sub->add_option("--bucket-mb", o.communication.bucket_mb, "Allreduce bucket size in MiB, as `tula train`")->capture_default_str();
  sub->add_option("--first-bucket-mb", o.communication.first_bucket_mb, "First bucket size in MiB")->capture_default_str();
  sub->add_option("--master-port", o.communication.master_port, "Rendezvous port of the communication trials' workers (0: a free one)")
      ->capture_default_str();
  sub->add_option("--worker-timeout", o.communication.worker_timeout_s,
                  "Bound in seconds on the communication trials' timeouts: each collective min(this, 120), the rendezvous "
                  "min(this, 60) (default 120 quick, 600)");
  sub->add_option("--pilot-metrics", o.pilot_metrics,
                  "`tula train --metrics` files: gradient-noise samples, and pilot runs to --target-accuracy");
  sub->add_option("--target-accuracy", o.target_accuracy, "Test accuracy the pilot runs count steps to (0-1)");
  sub->add_option("--out,-o", cmd->out, "Profile JSON to write")->capture_default_str();
  sub->add_flag("--cache", cmd->cache,
                "With --quick: reuse the cached profile of this model, input and machine (the one `tula train "
                "--batch-size auto` uses), or measure it and cache it; $TULA_CACHE_DIR names the cache");
  sub->add_flag("--reprofile", cmd->reprofile, "With --cache: measure again and replace the cached profile");
  return sub;
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto cmd = std::make_shared<ProfileCommand>();
  add_profile_flags(app, cmd)->callback([cmd] { run(*cmd); });
}

void quick_profile_in_process(const std::vector<std::string>& args, const profile::Log& log) {
  CLI::App app("tula");
  auto cmd = std::make_shared<ProfileCommand>();
  add_profile_flags(app, cmd);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  reversed.push_back("profile");
  app.parse(reversed);
  prepare(*cmd);
  if (!cmd->cache) throw std::invalid_argument("a profile in process goes through the profile cache: add --cache");
  run_cached(*cmd, log, [&log](const std::string& line) { log("warning: " + line); });
  // The caller lives on for the whole job: what the trials freed goes back to
  // the system rather than stay in the allocator's arenas.
  ::malloc_trim(0);
}

}  // namespace tula::cli
