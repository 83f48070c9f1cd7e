// `tula tune` end to end, as a user runs it: a zoo model and a TorchScript
// model profiled, piloted, planned and trained, with real reports; a profile
// from other hardware measured anew.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/end_to_end/tune_job.hpp"
#include "tune/runner.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The learning rate the workers stepped with first (the metrics' first step).
double first_step_lr(const fs::path& metrics) {
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const json r = json::parse(line, nullptr, false);
    if (r.is_object() && r.value("type", "") == "iter") return r.at("lr").get<double>();
  }
  ADD_FAILURE() << "no step in " << metrics;
  return -1;
}

TEST(TuneCommand, RunsAnEpochJobAndReportsTheBill) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  // Four epochs (16 steps at the pilot's batch): the plan, made after the
  // pilot's 6 steps and its evaluation, comes well before the workers could
  // finish (with two, it came one step before the end).
  const auto r = run_command(job(out, "--epochs 4 --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plan (knee"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tune succeeded: 4 epochs done"), std::string::npos) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["format"], "tula-tune-report");
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_TRUE(report["plan"].is_object());
  EXPECT_TRUE(report["chosen"].is_object());
  EXPECT_GT(report["predicted"]["time_s"].get<double>(), 0);
  EXPECT_GT(report["measured"]["time_s"].get<double>(), 0);
  const json& segments = report["segments"];
  ASSERT_GE(segments.size(), 2u) << "the pilot, then the training at the chosen configuration";
  EXPECT_EQ(segments[0]["label"], "pilot");
  EXPECT_EQ(segments[1]["label"], "train");
  // Where the plan keeps the pilot's configuration its workers go on: one
  // launch holds both records. Every other record is a launch of its own.
  size_t went_on = 0;
  for (const auto& s : segments) went_on += s["exit"] == "planned here; the workers went on" ? 1 : 0;
  EXPECT_LE(went_on, 1u) << segments.dump();
  if (segments[0]["exit"] == "planned here; the workers went on") {
    EXPECT_EQ(segments[1]["config"], segments[0]["config"]) << segments.dump();
    EXPECT_EQ(segments[1]["where"], segments[0]["where"]) << segments.dump();
    EXPECT_EQ(segments[1]["first_step"], segments[0]["last_step"]) << segments.dump();
  } else {
    EXPECT_NE(segments[1]["config"], segments[0]["config"]) << "a relaunch at the pilot's own configuration: " << segments.dump();
    // The move is a row of the re-plans, with what it was weighed on.
    ASSERT_FALSE(report["replans"].empty()) << report.dump();
    const json& moved = report["replans"][0];
    EXPECT_TRUE(moved["applied"].get<bool>()) << moved.dump();
    EXPECT_TRUE(moved["reason"].get<std::string>().starts_with("the plan after the pilot: ")) << moved.dump();
    EXPECT_EQ(moved["to"], segments[1]["config"]) << moved.dump();
  }
  size_t launches = 0;
  while (fs::exists(fs::path(out) / "logs" / ("launch-" + std::to_string(launches + 1) + ".log"))) ++launches;
  EXPECT_EQ(launches, segments.size() - went_on) << segments.dump();
  // The curve read a tenth of the training samples held out; the test split once, at the end.
  EXPECT_EQ(report["measured"]["evaluated_on"], "validation");
  EXPECT_TRUE(report["measured"]["final_accuracy"].is_number()) << report["measured"].dump();
  // Four epochs, at least. A relaunch at a larger batch resumes at the last
  // whole step of its own batch, and the last step ends past the fourth
  // epoch, so up to about one step of the largest batch (512 here, more than
  // a whole epoch of this tiny set) comes on top.
  EXPECT_GE(report["measured"]["epochs"].get<double>(), 4.0);
  EXPECT_LE(report["measured"]["epochs"].get<double>(), 5.5);
  const json state = read_json(fs::path(out) / "tune.json");
  EXPECT_EQ(state["phase"], "done");
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoints" / "latest.pt"));
  std::ifstream html(fs::path(out) / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<html"), std::string::npos);
}

// A job directory named relative to where the command runs, as a user types
// it: the workers, which run in that directory, write their metrics and
// checkpoints where the job reads them, not in a folder of the same name
// under it (where the job once saw no step and judged its target out of reach).
TEST(TuneCommand, ARelativeOutDirectoryHoldsTheWorkersFiles) {
  TempDir dir;
  const auto r = run_command("cd " + dir.path().string() + " && " + job("job", "--epochs 1 --profile " + shared_profile()),
                             300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tune succeeded: 1 epochs done"), std::string::npos) << r.output;
  const fs::path out = dir.path() / "job";
  EXPECT_FALSE(fs::exists(out / "job")) << "the workers wrote under the job's directory, not in it";
  EXPECT_TRUE(fs::exists(out / "checkpoints" / "latest.pt"));
  const json report = read_json(out / "report.json");
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_GE(report["measured"]["epochs"].get<double>(), 1.0) << report["measured"].dump();
  EXPECT_GT(report["measured"]["steps"].get<int64_t>(), 0) << report["measured"].dump();
}

// Workers that exit cleanly but leave no record where the job reads fail the
// job, naming the file, rather than letting it judge steps it never saw
// ("not reached, best 0.0%", or "epochs done" after none).
TEST(TuneCommand, WorkersThatLeaveNoRecordFailTheJobSayingWhere) {
  TempDir dir;
  const fs::path tula = dir.path() / "silent-tula";
  std::ofstream(tula) << "#!/bin/sh\nexit 0\n";
  fs::permissions(tula, fs::perms::owner_all);
  tune::TuneOptions o;
  o.job.model = "small_cnn";
  o.job.dataset = "synthetic";
  o.job.synthetic_size = 512;
  o.job.epochs = 1;
  o.pilot.profile_path = shared_profile();
  o.job.out_dir = (dir.path() / "job").string();
  o.progress = "none";
  o.pilot.history = false;
  // Where the given profile's hardware is not this process's (its math library), the job profiles: the test job's
  // profile stands in for that measurement.
  const auto profile_as_measured = [&o](const std::vector<std::string>& args, const auto&) {
    const auto out = std::find(args.begin(), args.end(), "--out");
    ASSERT_NE(out, args.end());
    fs::copy_file(o.pilot.profile_path, *(out + 1), fs::copy_options::overwrite_existing);
  };
  const auto result = tune::run_tune(o, tula.string(), profile_as_measured);
  EXPECT_EQ(result.state, records::TuneOutcome::Failed) << result.reason;
  EXPECT_NE(result.reason.find("finished without writing a record to " + o.job.out_dir + "/metrics.jsonl"),
            std::string::npos)
      << result.reason;
}

// The report's price is that of the type the job runs on, not the catalog's
// first (which it named before the job was placed).
TEST(TuneCommand, TheReportPricesTheTypeTheJobRunsOn) {
  TempDir dir;
  const fs::path catalog = dir.path() / "two.json";
  std::ofstream(catalog) << R"({"format": "tula-catalog", "version": 1, "currency": "USD", "machine_types": [
      {"name": "first", "device_kind": "cpu", "devices_per_node": 1, "max_workers_per_node": 2,
       "device_memory_gib": 2, "price_per_hour": 0.5, "network_gbps": 10, "max_nodes": 1},
      {"name": "second", "device_kind": "cpu", "devices_per_node": 1, "max_workers_per_node": 2,
       "device_memory_gib": 2, "price_per_hour": 0.02, "network_gbps": 10, "max_nodes": 1}]})";
  const std::string out = (dir.path() / "job").string();
  const auto r = run_command(job(out, "--epochs 1 --start-at 1x8 --start-on second --no-replan --resources " +
                                          catalog.string() + " --profile " + shared_profile()),
                             300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["chosen"]["machine"], "second") << report["chosen"].dump();
  EXPECT_EQ(report["price"]["per_hour"].get<double>(), 0.02) << report["price"].dump();
  EXPECT_NE(report["price"]["basis"].get<std::string>().find("second"), std::string::npos) << report["price"].dump();
}

// After the pilot the job runs at the pilot's configuration, so the plan's
// choice is a move like one at a watch: with --min-saving 1 (a saving of
// all that is left, net of the restart, which no move can make) no move
// pays, the pilot's workers go on whatever the plan chose, and a choice
// elsewhere is recorded as a declined re-plan.
TEST(TuneCommand, APlanThatDoesNotPayForItsRestartKeepsThePilotsWorkers) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  // Four epochs (16 steps): the plan, made after the pilot's 6 steps and its
  // evaluation, comes well before the workers could finish.
  const auto r = run_command(job(out, "--epochs 4 --min-saving 1 --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["state"], "succeeded");
  const json& segments = report["segments"];
  ASSERT_EQ(segments.size(), 2u) << segments.dump();
  EXPECT_EQ(segments[0]["exit"], "planned here; the workers went on") << segments.dump();
  EXPECT_EQ(segments[1]["config"], segments[0]["config"]) << segments.dump();
  EXPECT_FALSE(fs::exists(fs::path(out) / "logs" / "launch-2.log")) << "one launch for the whole job";
  EXPECT_EQ(report["chosen"], segments[0]["config"]) << report["chosen"].dump();
  const json& planned = report["plan"]["chosen"];
  const json& pilot = segments[0]["config"];
  bool plan_chose_the_pilot = true;
  for (const char* key : {"machine", "nodes", "workers_per_node", "batch_per_worker", "accumulation_steps"}) {
    plan_chose_the_pilot = plan_chose_the_pilot && planned[key] == pilot[key];
  }
  if (plan_chose_the_pilot) return;
  ASSERT_GE(report["replans"].size(), 1u) << report["replans"].dump();
  const json& declined = report["replans"][0];
  EXPECT_FALSE(declined["applied"].get<bool>());
  EXPECT_EQ(declined["from"], pilot);
  EXPECT_EQ(declined["to"]["batch_per_worker"], planned["batch_per_worker"]);
  EXPECT_TRUE(declined["reason"].get<std::string>().starts_with("the plan after the pilot: ")) << declined.dump();
  EXPECT_NE(r.output.find("so the pilot's workers go on"), std::string::npos) << r.output;
}

// The plan after the pilot is a row of the re-plans whether or not the job
// moves: a deadline takes the plan's choice (made to meet it), and the row
// keeps what the move was weighed on.
TEST(TuneCommand, APlanMoveAfterThePilotIsARowOfTheReplans) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  const auto r = run_command(job(out, "--epochs 4 --objective deadline=1 --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  const json& segments = report["segments"];
  ASSERT_GE(segments.size(), 2u) << segments.dump();
  if (segments[1]["config"] == segments[0]["config"]) {
    // The plan chose the pilot's placement: nothing was weighed.
    EXPECT_TRUE(report["replans"].empty()) << report["replans"].dump();
    return;
  }
  ASSERT_FALSE(report["replans"].empty()) << report.dump();
  const json& moved = report["replans"][0];
  EXPECT_TRUE(moved["applied"].get<bool>()) << moved.dump();
  EXPECT_EQ(moved["from"], segments[0]["config"]) << moved.dump();
  EXPECT_EQ(moved["to"], segments[1]["config"]) << moved.dump();
  const auto reason = moved["reason"].get<std::string>();
  EXPECT_TRUE(reason.starts_with("the plan after the pilot: ")) << reason;
  EXPECT_TRUE(reason.find("takes the plan's choice") != std::string::npos ||
              reason.find("the move pays by --min-saving") != std::string::npos)
      << reason;
  EXPECT_GT(moved["numbers"]["remaining_s_here"].get<double>(), 0) << moved.dump();
  EXPECT_NE(r.output.find("the plan after the pilot: "), std::string::npos) << r.output;
}

// A batch schedule given by hand: --start-at's configuration until --then-at's
// epochs are done, then the other, resumed from the checkpoint.
TEST(TuneCommand, ThenAtMovesOnceItsEpochsAreDone) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  const auto r = run_command(
      job(out, "--epochs 3 --start-at 1x8 --then-at 1:2x16 --no-replan --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("once 1 epochs are done, as --then-at asks"), std::string::npos) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["state"], "succeeded");
  ASSERT_EQ(report["replans"].size(), 1u) << report["replans"].dump();
  const json& move = report["replans"][0];
  EXPECT_TRUE(move["applied"].get<bool>());
  EXPECT_EQ(move["from"]["global_batch"], 8);
  EXPECT_EQ(move["to"]["global_batch"], 32);
  EXPECT_EQ(move["to"]["workers_per_node"], 2);
  // Two launches: at B = 8 past the first epoch (the watch comes every 4 steps), then at B = 32 to the end.
  ASSERT_EQ(report["segments"].size(), 2u) << report["segments"].dump();
  const json& first = report["segments"][0];
  const json& second = report["segments"][1];
  EXPECT_EQ(first["config"]["global_batch"], 8);
  EXPECT_EQ(second["config"]["global_batch"], 32);
  // The epochs counted as the runner and the report count them: the 512
  // samples less the tenth held out for the validation curve.
  const double train_samples = 512 - 51;
  EXPECT_GE(first["last_step"].get<double>() * 8, train_samples) << "moved before its epoch was done";
  EXPECT_GT(second["last_step"].get<int64_t>(), first["last_step"].get<int64_t>());
  EXPECT_GE(report["measured"]["epochs"].get<double>(), 3.0);
  EXPECT_EQ(first_step_lr(fs::path(out) / "metrics.jsonl"), 0.05)
      << "at B = 8, below the reference batch of 128, the tuned rate from the first step: no warmup";
  // One restart, the move's: its start-up is the restarts' phase, counted
  // once, so the phases add up to no more than the job.
  const json& phases = report["phases"];
  EXPECT_EQ(report["measured"]["restarts"], 1) << report["measured"].dump();
  EXPECT_GT(phases["restart_s"].get<double>(), 0) << phases.dump();
  EXPECT_LE(phases["profile_s"].get<double>() + phases["pilot_s"].get<double>() + phases["train_s"].get<double>() +
                phases["restart_s"].get<double>(),
            phases["total_s"].get<double>() + 1e-6)
      << phases.dump();
}

// Above the batch its rate was tuned at, a job warms up (from a rate of 0).
TEST(TuneCommand, AJobAboveItsReferenceBatchWarmsUp) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  const auto r = run_command(
      job(out, "--epochs 1 --start-at 1x32 --reference-batch 16 --no-replan --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(first_step_lr(fs::path(out) / "metrics.jsonl"), 0.0) << "B = 32 over a rate tuned at 16";
  // One launch: its workers' start-up is the training's, and no restart.
  ASSERT_TRUE(fs::exists(fs::path(out) / "logs" / "launch-1.log"));
  ASSERT_FALSE(fs::exists(fs::path(out) / "logs" / "launch-2.log"));
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["measured"]["restarts"], 0) << report["measured"].dump();
  EXPECT_EQ(report["phases"]["restart_s"], 0.0) << report["phases"].dump();
}

// --then-at refuses a move to where the job already runs, before training.
TEST(TuneCommand, ThenAtToWhereTheJobRunsIsRefused) {
  TempDir dir;
  expect_tula_fails("tune --model small_cnn --dataset synthetic --synthetic-size 512 --epochs 2 --start-at 1x8 "
                    "--then-at 1:1x8 --profile " + shared_profile() + " --out " + dir.str() + "/job",
                    "--then-at: 1 worker x 8 (global batch 8) is where --start-at already runs");
}

// A user's own model, saved by PyTorch as TorchScript: profiled, piloted,
// planned and trained as a zoo model is.
TEST(TuneCommand, RunsAUsersTorchScriptModel) {
  TempDir dir;
  const auto made = run_command("/usr/bin/python3 " + std::string(TULA_SOURCE_DIR) +
                                    "/tests/models/make_script_models.py " + dir.str(),
                                180);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::string model = (dir.path() / "rgb.pt").string();
  const std::string out = (dir.path() / "job").string();
  // The profile cache in the test's own folder, not the user's ~/.cache.
  const auto r = run_command("TULA_CACHE_DIR=" + (dir.path() / "cache").string() + " " + tula_binary() +
                                 " tune --model " + model +
                                 " --dataset synthetic --synthetic-size 512 --pilot-steps 6 --watch-every 4 "
                                 "--progress lines --epochs 1 --out " + out,
                             300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("profiling " + model), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tune succeeded: 1 epochs done"), std::string::npos) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_EQ(report["job"]["model"], model);
}

// The first job of a model measures its quick profile and caches it, the
// next reads it from the cache, both in `tula tune`'s own process (no second
// engine start-up): the same profile byte for byte.
TEST(TuneCommand, TheFirstJobMeasuresItsProfileAndTheNextReadsItInItsOwnProcess) {
  TempDir dir;
  const fs::path cache = dir.path() / "cache";
  const auto tune = [&](const std::string& name) {
    return run_command("TULA_CACHE_DIR=" + cache.string() + " " + tula_binary() +
                           " tune --model small_cnn --dataset synthetic --synthetic-size 512 --pilot-steps 6"
                           " --watch-every 4 --progress lines --epochs 1 --out " + (dir.path() / name).string(),
                       300);
  };
  const auto first = tune("first");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string first_log = read_text(dir.path() / "first" / "logs" / "profile.log");
  EXPECT_NE(first_log.find("run by `tula tune` in its own process"), std::string::npos) << first_log;
  EXPECT_NE(first_log.find("measuring a quick profile"), std::string::npos) << first_log;
  EXPECT_NE(first_log.find("  profile: profiling small_cnn"), std::string::npos) << first_log;

  const auto second = tune("second");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const std::string second_log = read_text(dir.path() / "second" / "logs" / "profile.log");
  EXPECT_NE(second_log.find("run by `tula tune` in its own process"), std::string::npos) << second_log;
  EXPECT_EQ(second_log.find("measuring a quick profile"), std::string::npos) << second_log;
  EXPECT_NE(second_log.find("reused the cached profile " + cache.string()), std::string::npos) << second_log;
  std::vector<fs::path> cached;
  for (const auto& e : fs::directory_iterator(cache)) {
    if (e.path().extension() == ".json") cached.push_back(e.path());
  }
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_EQ(read_text(dir.path() / "first" / "profile.json"), read_text(cached[0]));
  EXPECT_EQ(read_text(dir.path() / "second" / "profile.json"), read_text(cached[0]));
  EXPECT_EQ(read_json(fs::path(dir.path() / "second" / "report.json"))["state"], "succeeded");
}

TEST(TuneCommand, AProfileFromOtherHardwareIsReplacedAndSaidSo) {
  TempDir dir;
  json profile = read_json(shared_profile());
  profile["hardware"]["cpu_model"] = "Some Other CPU 9000";
  profile["hardware"]["cores"] = 64;
  const fs::path foreign = dir.path() / "foreign.json";
  std::ofstream(foreign) << profile.dump();
  const auto r = run_command(job(dir.str() + "/job", "--epochs 1 --profile " + foreign.string()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("is from other hardware"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Some Other CPU 9000"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("profiling small_cnn"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::testing
