// `tula profile-worker` (hidden): one worker process of `tula profile`'s
// communication trials, started by the launcher with torchrun's variables.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "profile/comm_worker.hpp"

namespace tula::cli {

void add_profile_worker_command(CLI::App& app) {
  auto spec_path = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("profile-worker", "One worker of `tula profile`'s communication trials");
  sub->group("");  // internal: not listed in --help
  sub->add_option("--spec", *spec_path, "The trial's JSON spec, written by `tula profile`")->required();
  sub->callback([spec_path] {
    std::ifstream in(*spec_path);
    if (!in) throw std::runtime_error("profile-worker: cannot open spec " + *spec_path);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("profile-worker: spec " + *spec_path + " is not JSON: " + e.what());
    }
    const auto spec = profile::worker_spec_from_json(j);
    // The last resort against a hang the collective timeouts do not cover:
    // SIGALRM ends the worker and the launcher stops the others.
    if (spec.deadline_s > 0) ::alarm(static_cast<unsigned>(spec.deadline_s));
    profile::run_comm_worker(spec);
  });
}

}  // namespace tula::cli
