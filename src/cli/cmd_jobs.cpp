// `tula jobs`: the service's command-line client, on the same /v1 API as the
// web page: submit, list, show, cancel and watch jobs.
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/text.hpp"
#include "records/record_error.hpp"
#include "records/tune_report.hpp"
#include "service/auth.hpp"
#include "tune/terminal.hpp"

namespace tula::cli {
namespace {

using nlohmann::json;

struct Connection {
  std::string server = "http://127.0.0.1:8470";
  std::string token_file;

  std::unique_ptr<httplib::Client> client(int read_timeout_s = 30) const {
    auto c = std::make_unique<httplib::Client>(server);
    const bool http = server.rfind("http://", 0) == 0 || server.rfind("https://", 0) == 0;
    if (!http || !c->is_valid()) {
      throw std::invalid_argument("--server " + server + " is not a URL like http://HOST:PORT");
    }
    c->set_connection_timeout(5);
    c->set_read_timeout(read_timeout_s);
    c->set_tcp_nodelay(true);
    const std::string token = token_file.empty() ? "" : service::read_token_file(token_file);
    if (!token.empty()) c->set_bearer_token_auth(token.c_str());
    return c;
  }
};

// The body of a 2xx answer as JSON; anything else throws with the server's message.
json expect(const httplib::Result& r, const std::string& what, const std::string& server) {
  if (!r) throw std::runtime_error(what + ": cannot reach " + server + " (" + httplib::to_string(r.error()) + ")");
  if (r->status == 204) return json::object();
  json body = json::parse(r->body, nullptr, false);
  if (r->status / 100 != 2) {
    const std::string message = body.is_object() && body.contains("error") ? body["error"].value("message", r->body) : r->body;
    throw std::runtime_error(fmt::format("{}: HTTP {}: {}", what, r->status, message));
  }
  if (body.is_discarded()) throw std::runtime_error(what + ": the server's answer is not JSON");
  return body;
}

std::string percent(const json& v) { return v.is_number() ? common::percent(v.get<double>(), 2) : "-"; }

void print_row(const json& j) {
  const json& p = j["progress"];
  const std::string goal = j["target_accuracy"].is_number() ? "to " + percent(j["target_accuracy"])
                                                            : (j["epochs"].is_number() ? j["epochs"].dump() + " epochs" : "-");
  const std::string done =
      p["fraction"].is_number() ? fmt::format("{}%", static_cast<int>(100 * p["fraction"].get<double>())) : "-";
  std::cout << fmt::format("{:<6}{:<11}{:<26}{:<14}{:<10}{:<8}{}\n", j["id"].get<int64_t>(),
                           j["state"].get<std::string>(),
                           j["model"].get<std::string>() + "/" + j["dataset"].get<std::string>(), goal,
                           j["objective"].get<std::string>(), done, percent(p["best_accuracy"]));
}

// "key=value": the value as JSON when it reads as a number or true/false, else a string.
void set_field(json& spec, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--set wants KEY=VALUE (got '" + assignment + "')");
  const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  const json value = json::parse(text, nullptr, false);
  spec[key] = !value.is_discarded() && (value.is_number() || value.is_boolean()) ? value : json(text);
}

struct SubmitArgs {
  std::string spec_file, model, dataset, objective, idempotency_key;
  double target_accuracy = 0, epochs = 0;
  std::vector<std::string> sets;
  bool watch = false;
};

int watch_job(const Connection& conn, int64_t id);

void submit(const Connection& conn, const SubmitArgs& a) {
  json spec = json::object();
  if (!a.spec_file.empty()) {
    std::stringstream text;
    if (a.spec_file == "-") {
      text << std::cin.rdbuf();
    } else {
      std::ifstream in(a.spec_file);
      if (!in) throw std::invalid_argument("--spec " + a.spec_file + ": cannot read it");
      text << in.rdbuf();
    }
    spec = json::parse(text.str(), nullptr, false);
    if (spec.is_discarded() || !spec.is_object()) throw std::invalid_argument("--spec " + a.spec_file + ": not a JSON object");
  }
  if (!a.model.empty()) spec["model"] = a.model;
  if (!a.dataset.empty()) spec["dataset"] = a.dataset;
  if (!a.objective.empty()) spec["objective"] = a.objective;
  if (a.target_accuracy > 0) spec["target_accuracy"] = a.target_accuracy;
  if (a.epochs > 0) spec["epochs"] = a.epochs;
  for (const auto& s : a.sets) set_field(spec, s);
  auto client = conn.client();
  httplib::Headers headers;
  if (!a.idempotency_key.empty()) headers.emplace("Idempotency-Key", a.idempotency_key);
  const json job = expect(client->Post("/v1/jobs", headers, spec.dump(), "application/json"), "submit", conn.server);
  std::cout << "job " << job["id"].get<int64_t>() << " " << job["state"].get<std::string>() << ": " << conn.server
            << "/jobs/" << job["id"].get<int64_t>() << std::endl;
  if (a.watch) exit_status() = watch_job(conn, job["id"].get<int64_t>());
}

// Follows the job's event stream, drawing one progress line; returns 0 when
// the job succeeds, 1 when it fails or is cancelled.
int watch_job(const Connection& conn, int64_t id) {
  const bool tty = ::isatty(STDOUT_FILENO);
  std::string buffer, state = "unknown";
  std::optional<records::TimelinePoint> progress;  // the last progress event
  bool full = false;                               // succeeded: the bar ends full
  double best = 0;
  int64_t step = 0;  // the furthest step seen, in the metrics or in a watch
  auto client = conn.client(60);  // the server sends a keep-alive every 10 s
  const auto draw = [&] {
    const double fraction =
        full ? 1.0 : (progress ? progress->t_s / std::max(1e-9, progress->predicted_total_s) : 0.0);
    const int width = 30, filled = static_cast<int>(width * std::clamp(fraction, 0.0, 1.0));
    std::string line = fmt::format("job {} {:<10} [{}{}] {:<4}% step {}  best {:.2f}%", id, state,
                                   std::string(filled, '#'), std::string(width - filled, '.'),
                                   static_cast<int>(100 * std::clamp(fraction, 0.0, 1.0)), step, 100 * best);
    // The time left as `tula tune`'s own progress line says it: "~2m30s left (2m10s to 3m05s, predicted)".
    if (progress) line += "  " + tune::time_left_text(progress->predicted_remaining_s, progress->predicted_remaining_range);
    std::cout << (tty ? "\r" + line + "\033[K" : line + "\n") << std::flush;
  };
  bool ended = false;
  const auto r = client->Get("/v1/jobs/" + std::to_string(id) + "/events", [&](const char* data, size_t n) {
    buffer.append(data, n);
    for (size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
      const std::string block = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      std::string type = "message", payload;
      std::istringstream lines(block);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("event: ", 0) == 0) type = line.substr(7);
        if (line.rfind("data: ", 0) == 0) payload += line.substr(6);
      }
      const json d = json::parse(payload, nullptr, false);
      if (d.is_discarded()) continue;
      if (type == "state" || type == "end") state = d.value("state", state);
      if (type == "end" && state == "succeeded") full = true;
      if (type == "progress") {
        try {
          progress = records::timeline_point_from_json(d);
          step = std::max(step, progress->step);
        } catch (const records::RecordError&) {
          continue;  // not a timeline point: skipped, as a payload that is not JSON
        }
      }
      if (type == "metrics") {
        for (const auto& e : d.value("evaluations", json::array())) best = std::max(best, e.value("test_accuracy", 0.0));
        for (const auto& s : d.value("steps", json::array())) step = std::max(step, s.value("step", int64_t{0}));
      }
      if (type == "replan" && d.contains("to")) {
        std::cout << (tty ? "\n" : "") << "job " << id << " re-planned: " << d.value("reason", std::string("")) << "\n";
      }
      draw();
      if (type == "end") ended = true;
    }
    return !ended;
  });
  if (!ended) {
    if (!r) throw std::runtime_error("watch: the event stream from " + conn.server + " broke (" + httplib::to_string(r.error()) + ")");
    if (r->status != 200) expect(r, "watch", conn.server);
  }
  if (tty) std::cout << "\n";
  const json job = expect(conn.client()->Get("/v1/jobs/" + std::to_string(id)), "watch", conn.server);
  std::cout << "job " << id << " " << job["state"].get<std::string>() << ": " << job["reason"].get<std::string>() << std::endl;
  return job["state"] == "succeeded" ? 0 : 1;
}

}  // namespace

void add_jobs_command(CLI::App& app) {
  auto conn = std::make_shared<Connection>();
  auto* jobs = app.add_subcommand("jobs", "Submit, list, show, cancel and watch jobs of a `tula serve` server");
  jobs->require_subcommand(1);
  const auto connection_options = [conn](CLI::App* sub) {
    sub->add_option("--server", conn->server, "The server's URL")->capture_default_str()->envname("TULA_SERVER");
    sub->add_option("--token-file", conn->token_file, "The API token (needed to submit and cancel when the server has one)")
        ->envname("TULA_TOKEN_FILE");
  };

  auto args = std::make_shared<SubmitArgs>();
  auto* submit_cmd = jobs->add_subcommand("submit", "Submit a job; its fields are `tula tune`'s flags");
  connection_options(submit_cmd);
  submit_cmd->add_option("--spec", args->spec_file, "The job as a JSON file (- for standard input)");
  submit_cmd->add_option("--model", args->model, "Model");
  submit_cmd->add_option("--dataset", args->dataset, "Data set");
  submit_cmd->add_option("--target-accuracy", args->target_accuracy,
                         "Train until the accuracy on the validation split (the job's validation_size) reaches this (0-1)");
  submit_cmd->add_option("--epochs", args->epochs, "Or for this many epochs");
  submit_cmd->add_option("--objective", args->objective, "knee, fastest, cheapest, deadline=H or budget=USD");
  submit_cmd->add_option("--set", args->sets, "Any other field, KEY=VALUE (repeatable), e.g. --set pilot_steps=50");
  submit_cmd->add_option("--idempotency-key", args->idempotency_key, "A retried submit with this key returns the first job");
  submit_cmd->add_flag("--watch", args->watch, "Then watch it to the end");
  submit_cmd->callback([conn, args] { submit(*conn, *args); });

  auto state = std::make_shared<std::string>();
  auto* list_cmd = jobs->add_subcommand("list", "The jobs, newest first");
  connection_options(list_cmd);
  list_cmd->add_option("--state", *state, "Only jobs in this state");
  list_cmd->callback([conn, state] {
    const std::string path = "/v1/jobs?limit=1000" + (state->empty() ? "" : "&state=" + *state);
    const json body = expect(conn->client()->Get(path), "list", conn->server);
    std::cout << fmt::format("{:<6}{:<11}{:<26}{:<14}{:<10}{:<8}{}\n", "ID", "STATE", "MODEL/DATA", "GOAL",
                             "OBJECTIVE", "DONE", "BEST");
    for (const auto& j : body["jobs"]) print_row(j);
  });

  auto id = std::make_shared<int64_t>(0);
  auto* show_cmd = jobs->add_subcommand("show", "One job, in full (JSON)");
  connection_options(show_cmd);
  show_cmd->add_option("id", *id, "Job id")->required();
  show_cmd->callback([conn, id] {
    std::cout << expect(conn->client()->Get("/v1/jobs/" + std::to_string(*id)), "show", conn->server).dump(2) << std::endl;
  });

  auto* cancel_cmd = jobs->add_subcommand("cancel", "Cancel a job (it checkpoints and stops)");
  connection_options(cancel_cmd);
  cancel_cmd->add_option("id", *id, "Job id")->required();
  cancel_cmd->callback([conn, id] {
    const json job = expect(conn->client()->Post("/v1/jobs/" + std::to_string(*id) + "/cancel"), "cancel", conn->server);
    std::cout << "job " << *id << ": cancel requested (" << job["state"].get<std::string>() << ")" << std::endl;
  });

  auto* watch_cmd = jobs->add_subcommand("watch", "Follow a job to its end with a progress bar");
  connection_options(watch_cmd);
  watch_cmd->add_option("id", *id, "Job id")->required();
  watch_cmd->callback([conn, id] { exit_status() = watch_job(*conn, *id); });
}

}  // namespace tula::cli
