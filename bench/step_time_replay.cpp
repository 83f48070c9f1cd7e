// The time models' step at configurations that ran, from a profile: reads
// JSON lines {"profile": PATH, "machine": TYPE, "nodes": N, "batch": B} on
// stdin (one worker per node, one micro-batch per step, as the oracle grid
// runs) and prints for each the predicted seconds per optimizer step and its
// parts, with the overlap model the profile's fit gave. No pilot
// calibration: the quick profile as measured, which is what a plan starts
// from. bench/step_time_replay.py compares these with the grid's measured steps.
//
//   tula_step_time_replay CATALOG < configs.jsonl
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "plan/catalog.hpp"
#include "predict/predictor.hpp"

int main(int argc, char** argv) {
  using namespace tula;
  if (argc != 2) {
    std::cerr << "usage: tula_step_time_replay CATALOG < configs.jsonl\n";
    return 2;
  }
  const auto catalog = plan::load_catalog(argv[1]);
  std::map<std::string, predict::Predictor> predictors;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line);
    const auto path = j.at("profile").get<std::string>();
    auto it = predictors.find(path);
    if (it == predictors.end()) {
      predict::PredictorOptions options;
      options.calibrate_to_pilot = false;
      options.draws = 0;
      it = predictors.emplace(path, predict::Predictor::from_profile(predict::load_profile(path), options)).first;
    }
    const auto& predictor = it->second;
    const auto name = j.at("machine").get<std::string>();
    const plan::MachineType* machine = nullptr;
    for (const auto& m : catalog.machines) {
      if (m.spec.name == name) machine = &m;
    }
    if (!machine) {
      std::cerr << "tula_step_time_replay: no machine type '" << name << "' in " << argv[1] << "\n";
      return 2;
    }
    predict::Config c;
    c.nodes = j.at("nodes").get<int64_t>();
    c.batch_per_worker = j.at("batch").get<int64_t>();
    const auto b = predictor.point(c, machine->spec);
    const auto& overlap = predictor.models().overlap;
    nlohmann::json out = j;
    out["iteration_s"] = b.iteration_s;
    out["compute_s"] = b.compute_s;
    out["allreduce_s"] = b.allreduce_s;
    out["exposed_comm_s"] = b.exposed_comm_s;
    out["overlap_p"] = overlap.p;
    out["overlap_source"] = overlap.source;
    std::cout << out.dump() << "\n";
  }
  return 0;
}
