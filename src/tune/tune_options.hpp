// Everything `tula tune` can be told: the job (model, data, the goal), where
// it runs (resources, backend), how it trains (optimizer and rate rule), and
// how closely it is watched. Plain data; validate() names the bad option.
// No LibTorch here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::tune {

// Behaviour that changed under recorded jobs: each switch is true for a job
// of today, and a tune.json written before the change reads it false
// (option_schema.cpp, recorded_before), so that the job resumes and replays as
// it ran. Four of them are also ablations with a flag (--no-noise-growth,
// --no-epochs-floor, --forecast-alone, --no-exponent-prior); no code path
// reads them but the re-fit's and the plan's.
struct ReplaySwitches {
  // Plan with the pilot's B_noise grown over the job (predict/noise_growth.hpp);
  // false: as read.
  bool noise_growth = true;
  // Below reference_batch a configuration needs no fewer epochs than at it
  // (predict/statistical_model.hpp, steps_per_min_step); false: the law alone.
  bool epochs_floor = true;
  // Weigh the forecast crossing against the prior by their spreads, both on
  // the job's progress axis counted at its noise read, and count the steps
  // left at that read (tune/target_estimate.hpp, tune/refit.hpp); false: the
  // forecast alone once there is one, the steps left counted at the grown
  // B_noise.
  bool forecast_with_prior = true;
  // Fit the forecast's exponent with a prior on it, so one evaluation (the
  // pilot's) gives a crossing (tune/accuracy_forecast.hpp, ExponentPrior);
  // false: the evaluations' slope alone, from two evaluations on.
  bool forecast_exponent_prior = true;
  // Time the running configuration as the clock does: the mean of its steps
  // (slow ones included), its own launch's evaluations with the evaluation
  // model calibrated to them, and a pilot that runs to the first evaluation
  // when it is near (pilot_length); false: the median step and the mean of
  // every evaluation.
  bool clock_times = true;
  // The trainer counts --eval-every from each epoch's start; false: from step 0.
  bool evaluations_from_epoch_start = true;
};

// The job: what trains on what, to what goal, where it runs and at what price.
struct TuneJob {
  std::string model = "small_cnn";
  std::string dataset = "fashion-mnist";
  std::string data_dir;         // empty: the data set's usual place
  int64_t synthetic_size = 0;   // --dataset synthetic (timing only): training samples (0: the engine's default)
  // --dataset imagefolder: the side images are decoded to (0: 224) and the
  // evaluation's centre crop (1: the whole image; 0.875: ImageNet's).
  int64_t image_size = 0;
  double eval_crop = 0.875;
  // Training augmentation (random crop and flip; an image folder's
  // RandomResizedCrop): false trains on the images as they are.
  bool augment = true;
  double target_accuracy = 0;   // stop at this test accuracy (0-1) ...
  double epochs = 0;            // ... or after this many epochs (exactly one of the two)
  std::string objective = "knee";  // knee, fastest, cheapest, deadline=H, budget=USD
  std::string resources = "local";  // "local" or a catalog JSON path
  std::string backend = "local";    // local, slurm, emulated
  // Where it profiles and trains: cpu, cuda or auto (CUDA where the profile
  // finds a GPU). Training follows the device the profile measured.
  std::string device = "cpu";
  // The precision it profiles and trains at (`tula train --precision`): the
  // profile times the steps the training will run.
  std::string precision = "fp32";
  std::string cluster_state;        // --backend emulated: the cluster's state file (empty: the default prefix's)
  std::string out_dir;
  // Where every path above must lie (`tula serve` gives its data roots):
  // each is resolved against them again right before it is opened, and
  // opened from its root without following a symlink. Empty: used as given.
  std::vector<std::string> data_roots;
  // Pricing of --resources local, per node-hour.
  double local_price_per_hour = 0.10;
};

// How it trains: the rate is tuned at reference_batch and the optimizer
// scales it (AGS) or the rule does (sgd + linear, ...).
struct TuneTraining {
  std::string optimizer = "ags";
  double lr = 0.05;
  int64_t reference_batch = 128;
  std::string lr_scaling = "none";  // AGS scales by itself; sgd users pick linear or sqrt
  double momentum = 0.9;
  double weight_decay = 5e-4;
  // The warmup serves a rate raised above the one tuned at reference_batch
  // (Goyal et al. 2017); a launch at or below that batch trains at the tuned
  // rate and starts without one, unless warmup_at_reference says otherwise.
  double warmup_epochs = 0.5;
  bool warmup_at_reference = false;
  uint64_t seed = 0;
};

// What it measures before it plans: the profile, the pilot, earlier jobs.
struct TunePilot {
  std::string profile_path;       // reuse this profile instead of measuring one
  double profile_budget_s = 120;  // stated budget of the quick profile
  bool profile_cache = true;      // reuse the cached quick profile of this model, input and machine
  int64_t pilot_steps = 100;      // optimizer steps of the pilot segment (0: no pilot)
  int64_t pilot_workers = 0;      // 0: by the objective (pilot_layout)
  int64_t pilot_batch = 0;        // per worker; 0: the reference batch over the pilot's workers
  // Forecast the target's crossing from the training loss too and plan with
  // the geometric mean (tune/loss_forecast.hpp); false: from the evaluations
  // alone. With the exponent prior the evaluations alone erred less and the
  // mean had outliers hundreds of times too far (docs/notebook/round-57.md, "An
  // exponent prior for the forecast"), so a job forecasts from them unless
  // asked.
  bool loss_forecast = false;
  // Plan with E_min from earlier jobs of the same setup (tune/job_history.hpp)
  // and leave this job's there once it reaches its target; history_path
  // empty: the default file beside the profile cache. Jobs recorded before
  // the option planned with the stated prior.
  bool history = true;
  std::string history_path;
};

// Watching and re-planning while it trains.
struct TuneWatch {
  int64_t watch_every_steps = 50;     // compare with the plan every this many steps,
  double watch_every_s = 15;          // or this many seconds (at least 5 new steps), whichever comes first
  double eval_every_epochs = 0.25;    // evaluations, the accuracy curve's points
  // Samples held out of the training set for the curve, the forecast and
  // the target (-1: a tenth of the training set, at most 5,000; 0: evaluate
  // the test split as jobs did before the option). With a validation split
  // the test split is read once, at the end: the report's final accuracy.
  int64_t validation_size = -1;
  // The curve reads a moving average of the weights (`tula train
  // --eval-average`): a third as noisy as the weights themselves at a
  // constant rate (docs/benchmarks/decisions.md, "Evaluating the averaged weights");
  // 0 evaluates the weights, as jobs recorded before the option did (tune.json
  // without the key reads 0).
  double eval_average = 0.99;
  double min_saving = 0.10;           // re-plan only for a predicted saving above this share of what is left...
  double restart_cost_s = 8;          // ... and above the cost of a restart (measured once one happened)
  bool replan = true;                 // false: train at the first choice throughout
  double max_epochs = 30;             // the target is given up past this many epochs
  double give_up_after = 0.2;         // ... but never before this share of --max-epochs is done
  std::string on_out_of_reach = "stop";  // "continue": write the verdict down and go on (to check it)
  int max_retries = 3;                // relaunches after a worker dies
  std::string start_at;               // "WxB[xA]": train at this configuration first (to see a re-plan)
  std::string start_on;               // "TYPE[:NODES]": ... on these nodes of the catalog (default: its first type, 1 node)
  std::string then_at;                // "EPOCHS:WxB[xA]": with --start-at, a batch schedule given by hand: move to
                                      // this configuration once this many epochs are done
  std::string then_on;                // "TYPE[:NODES]": ... on these nodes (default: where --start-at runs)
};

// Everything `tula tune` takes, in the four parts above; the option schema
// (option_schema.hpp) names each option's field.
struct TuneOptions {
  TuneJob job;
  TuneTraining training;
  TunePilot pilot;
  TuneWatch watch;
  // How jobs recorded before each of these ran (tune.json reads them so).
  ReplaySwitches replay;

  std::string progress = "auto";  // auto, bar, lines, none
  bool resume = false;            // continue the job in out_dir

  bool to_target() const { return job.target_accuracy > 0; }
  // Throws std::invalid_argument naming the option.
  void validate() const;
};

// A configuration given by hand: workers x per-worker batch [x accumulation].
struct ManualConfig {
  int64_t workers = 1, batch_per_worker = 1, accumulation_steps = 1;
};
// "2x16" or "2x16x4"; an error names `option`.
ManualConfig parse_manual_config(const std::string& text, const std::string& option = "--start-at");

// Where a configuration given by hand runs: a machine type of the catalog and
// how many of its nodes.
struct ManualPlacement {
  std::string machine_type;
  int64_t nodes = 1;
};
// "emu-half" or "emu-half:4"; an error names `option`.
ManualPlacement parse_manual_placement(const std::string& text, const std::string& option = "--start-on");

// A move given by hand (--then-at): once `epochs` epochs are done, to `config`.
struct ManualMove {
  double epochs = 0;
  ManualConfig config;
};
ManualMove parse_manual_move(const std::string& text);  // "0.5:2x128"

// The samples held out for validation out of `train_samples` (0: none, the
// curve reads the test split). Throws std::invalid_argument when
// --validation-size leaves fewer than half of them to train on.
int64_t validation_samples(const TuneOptions& o, int64_t train_samples);

// The warmup of a launch at `global_batch`: warmup_epochs above the reference
// batch (or at any batch with warmup_at_reference), none at or below it.
double launch_warmup_epochs(const TuneOptions& o, int64_t global_batch);

// The passes over the curve's split an epoch (1 / --eval-every-epochs): the
// plan's front and the re-fit's time left count the same evaluations.
double evaluations_per_epoch(const TuneOptions& o);

// Optimizer steps between evaluations at `global_batch`, counted within each
// epoch (the trainer also evaluates at each epoch's end).
int64_t evaluation_interval_steps(const TuneOptions& o, int64_t train_samples, int64_t global_batch);

// The pilot's length: --pilot-steps, or up to the job's first evaluation
// when that comes within half as many steps again, so that the plan knows
// one evaluation's time where the pilot ran (an evaluation the job makes at
// that step anyway; the steps go on in the job).
int64_t pilot_length(int64_t pilot_steps, int64_t evaluation_interval);

// The pilot's workers and per-worker batch, where --pilot-workers and
// --pilot-batch do not give them: the reference batch on one worker, the
// default layout, where the measured knee was on four of the five grids of
// rounds 24, 29 and 30 (docs/notebook/), so that a job the plan keeps
// there pays no restart; the lone worker's noise probe gives the second batch
// size. For the fastest objective, whose plan goes to more workers, two.
struct PilotLayout {
  int64_t workers = 1;
  int64_t batch_per_worker = 1;
};
PilotLayout pilot_layout(const TuneOptions& o);

nlohmann::json to_json(const TuneOptions& o);
TuneOptions tune_options_from_json(const nlohmann::json& j);

}  // namespace tula::tune
