// `tula plan`: the best configuration over a price catalog for an objective,
// with the Pareto front, its knee and why; as a table, JSON and an SVG figure.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/planning_inputs.hpp"
#include "common/atomic_file.hpp"
#include "plan/planner.hpp"
#include "plan/report.hpp"
#include "plan/svg.hpp"

namespace tula::cli {
namespace {

struct PlanCommand {
  PlanningInputs inputs;
  std::string catalog;
  std::string objective = "knee";
  bool json = false;
  std::string svg;
  size_t max_rows = 24;
  int64_t min_global_batch = 1;
  int64_t max_global_batch = 0;
};

void run(const PlanCommand& cmd) {
  const auto objective = plan::parse_objective(cmd.objective);
  if (cmd.min_global_batch < 1 || cmd.max_global_batch < 0) {
    throw std::invalid_argument("--min-global-batch must be at least 1 and --max-global-batch non-negative");
  }
  plan::PlannerOptions options;
  options.predictor = cmd.inputs.predictor_options();
  options.space.min_global_batch = cmd.min_global_batch;
  options.space.max_global_batch = cmd.max_global_batch;
  const plan::Planner planner(cmd.inputs.load(), plan::load_catalog(cmd.catalog), options);
  const auto result = planner.plan(objective);
  if (!cmd.svg.empty()) common::write_file_atomically(cmd.svg, plan::render_svg(result));
  if (cmd.json) {
    std::cout << plan::to_json(result).dump(2) << std::endl;
  } else {
    std::cout << plan::format_table(result, cmd.max_rows);
    if (!cmd.svg.empty()) std::cout << "figure: " << cmd.svg << "\n";
    std::cout.flush();
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto cmd = std::make_shared<PlanCommand>();
  auto* sub = app.add_subcommand("plan", "Choose machine type, cluster size and batch size over a price catalog");
  sub->footer(
      "\nObjectives: fastest, cheapest, knee (of the time/cost Pareto front), deadline=H (cheapest\n"
      "finishing within H hours; also 90m, 2h), budget=USD (fastest costing at most USD).\n"
      "\nExamples:\n"
      "  tula plan --profile p.json --catalog catalogs/example.json --objective knee --svg plan.svg\n"
      "  tula plan --profile p.json --catalog catalogs/example.json --objective deadline=2 --json");
  cmd->inputs.add_options(*sub, true);
  sub->add_option("--catalog,-c", cmd->catalog, "Price catalog JSON (machine types, $/hour, devices, network)")
      ->required();
  sub->add_option("--objective", cmd->objective, "fastest, cheapest, knee, deadline=H or budget=USD")
      ->capture_default_str();
  sub->add_flag("--json", cmd->json, "Print the plan as JSON instead of a table");
  sub->add_option("--svg", cmd->svg, "Write the figure (time and cost against batch, the front, the knee) here");
  sub->add_option("--max-rows", cmd->max_rows, "Rows of the front in the table")->capture_default_str();
  sub->add_option("--min-global-batch", cmd->min_global_batch, "Smallest global batch to consider")
      ->capture_default_str();
  sub->add_option("--max-global-batch", cmd->max_global_batch,
                  "Largest global batch to consider (0: the training set size, and with --epochs the cap at the noise scale or 64 steps an epoch; docs/models.md)")
      ->capture_default_str();
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
