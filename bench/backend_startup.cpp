// One launch of a short `tula train` job through a backend, timed: from the
// request (Backend::start) to the first step's start, and from the last
// step's end to the launch's end as the backend sees it (wait_for). The same
// code path a tune job takes; bench/slurm_cluster.py runs it on the emulated
// backend and on the Slurm backend side by side, alternated.
//
//   tula_backend_startup --tula PATH --backend emulated|slurm --machine-type T --nodes N --workers W
//                        --steps K --dir DIR [--cluster-state FILE]
//
// Prints one JSON line: submit_to_first_step_s, last_step_to_end_s, total_s,
// steps, exit_code, where. The first step's start is its record's time less
// its iter_s, as the runner measures a launch's start-up.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/backend.hpp"

namespace {

using tula::tune::BackendOptions;
using tula::tune::WorkerLaunch;
namespace fs = std::filesystem;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Args {
  std::string tula, backend, machine_type, dir, cluster_state;
  int nodes = 1, workers = 1, steps = 5;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--tula") a.tula = v;
    else if (k == "--backend") a.backend = v;
    else if (k == "--machine-type") a.machine_type = v;
    else if (k == "--dir") a.dir = v;
    else if (k == "--cluster-state") a.cluster_state = v;
    else if (k == "--nodes") a.nodes = std::stoi(v);
    else if (k == "--workers") a.workers = std::stoi(v);
    else if (k == "--steps") a.steps = std::stoi(v);
    else throw std::invalid_argument("unknown option " + k);
  }
  if (a.tula.empty() || a.backend.empty() || a.dir.empty()) {
    throw std::invalid_argument("--tula, --backend and --dir are required");
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    fs::create_directories(a.dir);
    const std::string metrics = (fs::path(a.dir) / "metrics.jsonl").string();
    fs::remove(metrics);
    BackendOptions options;
    options.tula_binary = a.tula;
    options.cluster_state = a.cluster_state;
    auto backend = tula::tune::make_backend(a.backend, options);
    backend->check_available();
    WorkerLaunch launch;
    launch.workers = a.workers;
    launch.nodes = a.nodes;
    launch.machine_type = a.machine_type;
    launch.cpus_per_worker = 1;
    launch.worker_command = {a.tula, "train", "--model", "small_cnn", "--dataset", "synthetic", "--synthetic-shape",
                             "1x28x28", "--synthetic-size", "4096", "--batch-size", "32", "--max-steps",
                             std::to_string(a.steps), "--no-eval", "--progress", "none", "--metrics", metrics};
    launch.log_path = (fs::path(a.dir) / "launch.log").string();
    launch.work_dir = a.dir;
    launch.name = "tula-startup-bench";
    const double requested = unix_now();
    auto running = backend->start(launch);
    const auto exit = running->wait_for(std::chrono::minutes(10));
    const double ended = unix_now();
    if (!exit) running->kill();
    double first_start = 0, last_end = 0;
    int steps = 0;
    std::ifstream in(metrics);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || j.value("type", "") != "iter") continue;
      if (steps++ == 0) first_start = j.value("time", 0.0) - j.value("iter_s", 0.0);
      last_end = j.value("time", 0.0);
    }
    nlohmann::json row = {{"backend", a.backend},
                          {"machine_type", a.machine_type},
                          {"nodes", a.nodes},
                          {"workers", a.workers},
                          {"steps", steps},
                          {"exit_code", exit ? exit->exit_code : -1},
                          {"exit", exit ? exit->description : "did not end within 10 minutes"},
                          {"where", running->where()},
                          {"total_s", ended - requested}};
    if (steps > 0) {
      row["submit_to_first_step_s"] = first_start - requested;
      row["last_step_to_end_s"] = ended - last_end;
    }
    std::cout << row.dump() << std::endl;
    return exit && exit->exit_code == 0 && steps > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "tula_backend_startup: " << e.what() << "\n";
    return 2;
  }
}
