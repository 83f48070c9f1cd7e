// `tula predict`: time, memory and cost of one configuration from a profile,
// each with an interval.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/planning_inputs.hpp"
#include "plan/planner.hpp"
#include "predict/report.hpp"

namespace tula::cli {
namespace {

struct PredictCommand {
  PlanningInputs inputs;
  int64_t workers = 1;  // in all, over every node
  int64_t nodes = 1;
  int64_t batch_size = 0;
  int64_t accumulation_steps = 1;
  std::string catalog;
  std::string machine;
  bool split_to_fit = false;
  bool json = false;
};

void run(const PredictCommand& cmd) {
  if (cmd.workers < 1 || cmd.nodes < 1 || cmd.batch_size < 1 || cmd.accumulation_steps < 1) {
    throw std::invalid_argument("--workers, --nodes, --batch-size and --accumulation-steps must be at least 1");
  }
  if (cmd.workers % cmd.nodes != 0) {
    throw std::invalid_argument(
        fmt::format("--workers {} cannot be spread evenly over --nodes {} (workers are in all, nodes x workers per "
                    "node)",
                    cmd.workers, cmd.nodes));
  }
  if (!cmd.machine.empty() && cmd.catalog.empty()) throw std::invalid_argument("--machine needs --catalog");
  const auto profiles = cmd.inputs.load();
  const auto options = cmd.inputs.predictor_options();

  // The machine: a catalog entry (planned the way `tula plan` plans it, with
  // the profile of its device kind or scaled by its relative speed), or the
  // profiled machine itself.
  std::unique_ptr<plan::Planner> planner;
  std::unique_ptr<predict::Predictor> own;
  const predict::Predictor* predictor = nullptr;
  predict::MachineSpec machine;
  if (!cmd.catalog.empty()) {
    plan::PlannerOptions po;
    po.predictor = options;
    planner = std::make_unique<plan::Planner>(profiles, plan::load_catalog(cmd.catalog), po);
    const size_t i = find_machine(planner->catalog(), cmd.machine);
    machine = planner->catalog().machines[i].spec;
    try {
      predictor = &planner->predictor_for(i);
    } catch (const std::out_of_range& e) {
      throw std::invalid_argument("--machine " + machine.name + ": not planned from the profile(s) given: " + e.what());
    }
  } else {
    own = std::make_unique<predict::Predictor>(predict::Predictor::from_profile(profiles.front(), options));
    predictor = own.get();
    machine = predict::profiled_machine(profiles.front());
  }

  predict::Config config{cmd.nodes, cmd.workers / cmd.nodes, cmd.batch_size, cmd.accumulation_steps};
  std::string split_note;
  if (cmd.split_to_fit) {
    const auto split = predictor->fit_to_memory(cmd.batch_size, machine, config.workers_per_node);
    if (split.steps > 1) {
      config.batch_per_worker = split.micro_batch;
      config.accumulation_steps = cmd.accumulation_steps * split.steps;
      split_note = fmt::format("batch {} per worker does not fit; split into {} accumulation steps of {}",
                               cmd.batch_size, split.steps, split.micro_batch);
    }
  }
  auto prediction = predictor->predict(config, machine);
  if (!split_note.empty()) prediction.notes.insert(prediction.notes.begin(), split_note);
  if (cmd.json) {
    auto j = predict::to_json(prediction);
    j["assumptions"] = predictor->assumptions();
    std::cout << j.dump(2) << std::endl;
    return;
  }
  std::cout << predict::format_prediction(prediction);
  print_assumptions(predictor->assumptions());
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto cmd = std::make_shared<PredictCommand>();
  auto* sub = app.add_subcommand("predict", "Predict time, memory and cost of one configuration from a profile");
  sub->footer(
      "\nExamples:\n"
      "  tula predict --profile p.json --workers 2 --batch-size 64\n"
      "  tula predict --profile p.json --catalog catalogs/example.json --machine c7i.4xlarge --nodes 4 --workers 16 "
      "--batch-size 128 --json");
  cmd->inputs.add_options(*sub, false);
  sub->add_option("--workers,-n", cmd->workers, "Workers in all (nodes x workers per node)")->capture_default_str();
  sub->add_option("--nodes", cmd->nodes, "Nodes the workers are spread over")->capture_default_str();
  sub->add_option("--batch-size,-b", cmd->batch_size, "Batch per worker (per micro-step)")->required();
  sub->add_option("--accumulation-steps", cmd->accumulation_steps, "Micro-batches per optimizer step")
      ->capture_default_str();
  sub->add_option("--catalog", cmd->catalog, "Price catalog JSON (default: the profiled machine, price 0)");
  sub->add_option("--machine", cmd->machine, "Machine type of the catalog (needed when it has several)");
  sub->add_flag("--split-to-fit", cmd->split_to_fit,
                "Split a batch too large for the device's memory into accumulation steps instead of failing");
  sub->add_flag("--json", cmd->json, "Print JSON instead of a report");
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
