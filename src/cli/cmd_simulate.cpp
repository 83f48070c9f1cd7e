// `tula simulate`: the fitted models on a cluster this machine is not (e.g.
// 8 nodes of 8 GPUs on 25 Gb/s): how iteration time, epoch time and cost
// scale with the nodes, with every assumption printed.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/planning_inputs.hpp"
#include "common/text.hpp"
#include "plan/planner.hpp"
#include "plan/report.hpp"
#include "plan/space.hpp"
#include "predict/error.hpp"
#include "predict/report.hpp"

namespace tula::cli {
namespace {

using common::format_bytes;
using common::format_money;
using common::format_number;
using common::format_seconds;

struct SimulateCommand {
  PlanningInputs inputs;
  std::string cluster;
  int64_t batch_size = 0;  // per worker; 0: min(64, what fits)
  std::string objective;   // also plan over the cluster with this objective
  bool json = false;
};

std::string describe_machine(const plan::MachineType& m, bool scaled, const std::string& profiled_device) {
  const auto& s = m.spec;
  std::string o = fmt::format("{}: up to {} node(s) x {} {} device(s) of {}, up to {} worker(s) per node, {}/node-hour, "
                              "network {} Gb/s",
                              s.name, m.max_nodes, s.devices_per_node, s.device_kind,
                              format_bytes(static_cast<double>(s.device_memory_bytes)), s.max_workers_per_node,
                              format_money(s.price_per_hour), format_number(s.network_gbps));
  if (s.network_latency_s > 0) o += fmt::format(", latency {}", format_seconds(s.network_latency_s));
  if (scaled) {
    o += fmt::format("; compute scaled from the profiled {} by relative_speed {}", profiled_device,
                     format_number(s.relative_speed));
  }
  return o;
}

std::string interval_text(const predict::Interval& i, std::string (*show)(double)) {
  return fmt::format("{} [{}, {}]", show(i.estimate), show(i.lo), show(i.hi));
}

// One machine type's rows, one per node count (powers of two): the table's
// lines into `text`, each prediction's notes into `notes` once.
nlohmann::json simulate_rows(const plan::MachineType& mt, const predict::Predictor& predictor, int64_t batch_size,
                             std::string& text, std::vector<std::string>& notes) {
  const int64_t wpn = mt.spec.max_workers_per_node;
  const int64_t fits = predictor.max_batch_per_worker(mt.spec, wpn);
  if (fits < 1) {
    throw predict::InfeasibleError(fmt::format("{}: not even a batch of 1 per worker fits its {} devices with {} "
                                               "workers per node",
                                               mt.spec.name,
                                               format_bytes(static_cast<double>(mt.spec.device_memory_bytes)), wpn));
  }
  const int64_t wanted = batch_size > 0 ? batch_size : std::min<int64_t>(64, fits);
  const auto split = predictor.fit_to_memory(wanted, mt.spec, wpn);
  if (split.steps > 1) {
    text += fmt::format("  batch {} per worker does not fit; simulated as {} accumulation steps of {}\n", wanted,
                        split.steps, split.micro_batch);
  }
  char header[256];
  std::snprintf(header, sizeof header, "  %5s %7s %8s  %-30s %-12s %-12s %-12s %-12s %-10s %8s\n", "nodes", "workers",
                "batch", "iteration [95%]", "compute", "exposed comm", "epoch",
                predictor.to_target() ? "to target" : "time", "cost", "speedup");
  text += header;
  nlohmann::json rows = nlohmann::json::array();
  double base_time = 0;
  for (const int64_t nodes : plan::powers_of_two_upto(mt.max_nodes)) {
    const predict::Config config{nodes, wpn, split.micro_batch, split.steps};
    const auto p = predictor.predict(config, mt.spec);
    if (base_time == 0) base_time = p.time_s.estimate;  // the first row is one node
    const double speedup = base_time / p.time_s.estimate;
    char line[512];
    std::snprintf(line, sizeof line, "  %5lld %7lld %8lld  %-30s %-12s %-12s %-12s %-12s %-10s %7.2fx\n",
                  static_cast<long long>(nodes), static_cast<long long>(p.workers),
                  static_cast<long long>(p.global_batch), interval_text(p.per_step.iteration_s, format_seconds).c_str(),
                  format_seconds(p.per_step.compute_s.estimate).c_str(),
                  format_seconds(p.per_step.exposed_comm_s.estimate).c_str(),
                  format_seconds(p.epoch_s.estimate).c_str(), format_seconds(p.time_s.estimate).c_str(),
                  format_money(p.cost.estimate).c_str(), speedup);
    text += line;
    for (const auto& note : p.notes) {
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    }
    auto j = predict::to_json(p);
    j["speedup_vs_one_node"] = speedup;
    rows.push_back(std::move(j));
  }
  return rows;
}

void run(const SimulateCommand& cmd) {
  if (cmd.batch_size < 0) throw std::invalid_argument("--batch-size must be positive");
  const auto profiles = cmd.inputs.load();
  plan::PlannerOptions options;
  options.predictor = cmd.inputs.predictor_options();
  const plan::Planner planner(profiles, plan::load_catalog(cmd.cluster), options);
  const auto& catalog = planner.catalog();

  nlohmann::json out = {{"cluster", plan::to_json(catalog)}, {"machines", nlohmann::json::array()}};
  std::string text;
  std::vector<std::string> assumptions;
  std::vector<std::string> notes;  // the predictions' own (network, scaling, memory), once each
  bool to_target = false;
  for (size_t mi = 0; mi < catalog.machines.size(); ++mi) {
    const auto& mt = catalog.machines[mi];
    const predict::Predictor* predictor = nullptr;
    try {
      predictor = &planner.predictor_for(mi);
    } catch (const std::out_of_range& e) {
      text += fmt::format("skipped: {}\n", e.what());
      continue;
    }
    // Scaled: planned at a speed other than the profiled device's (plan/device_speed.hpp).
    const bool own_profile = mt.spec.relative_speed == 1;
    const auto& profiled = profiles.front().hardware.device;
    text += describe_machine(mt, !own_profile, profiled.name.empty() ? profiled.kind : profiled.name) + "\n";

    const nlohmann::json rows = simulate_rows(mt, *predictor, cmd.batch_size, text, notes);
    out["machines"].push_back({{"name", mt.spec.name}, {"scaled_from_profile", !own_profile}, {"rows", rows}});
    if (assumptions.empty()) assumptions = predictor->assumptions();
    to_target = predictor->to_target();
  }
  if (out["machines"].empty()) {
    throw predict::InfeasibleError("simulate: no machine type of the cluster can be simulated:\n" + text);
  }
  text += fmt::format("(speedup: time at one node over time at n nodes; time is {})\n",
                      to_target ? "to the target accuracy" : "for the epochs predicted");

  std::unique_ptr<plan::Plan> planned;
  if (!cmd.objective.empty()) planned = std::make_unique<plan::Plan>(planner.plan(plan::parse_objective(cmd.objective)));
  assumptions.insert(assumptions.end(), notes.begin(), notes.end());
  out["assumptions"] = assumptions;
  if (planned) out["plan"] = plan::to_json(*planned);
  if (cmd.json) {
    std::cout << out.dump(2) << std::endl;
    return;
  }
  std::cout << text;
  if (planned) std::cout << "\n" << plan::format_table(*planned);
  print_assumptions(assumptions);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto cmd = std::make_shared<SimulateCommand>();
  auto* sub = app.add_subcommand("simulate", "Predict scaling on a cluster this machine is not, from a profile");
  sub->footer(
      "\nThe cluster is a price catalog (\"tula-catalog\" v1) describing its machine types: devices\n"
      "and memory per node, network Gb/s and latency, max_nodes, and relative_speed when no\n"
      "profile of its device kind is given. Each machine type is simulated with full nodes\n"
      "(max_workers_per_node workers) at 1, 2, 4, ... max_nodes nodes.\n"
      "\nExample:\n"
      "  tula simulate --profile p.json --cluster catalogs/cluster-64gpu.json --batch-size 64");
  cmd->inputs.add_options(*sub, true);
  sub->add_option("--cluster", cmd->cluster, "Cluster description (a catalog JSON)")->required();
  sub->add_option("--batch-size,-b", cmd->batch_size, "Batch per worker (default: 64, or the largest that fits)");
  sub->add_option("--objective", cmd->objective, "Also plan over the cluster: fastest, cheapest, knee, ...");
  sub->add_flag("--json", cmd->json, "Print JSON instead of tables");
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
