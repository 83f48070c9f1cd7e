// `tula serve` end to end, as a team runs it: a real server, real tune
// processes training small_cnn on a small synthetic set, real signals.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers/child_process.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"
#include "service/sqlite.hpp"
#include "service/tune_process.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// A server on a free port over dir/jobs.db and dir/work.
class Server {
 public:
  Server(const TempDir& dir, const std::vector<std::string>& extra = {}) : dir_(dir.path()) {
    const fs::path ready = dir_ / "ready.json";
    fs::remove(ready);
    std::vector<std::string> argv = {tula_binary(), "serve", "--listen", "127.0.0.1:0", "--db", (dir_ / "jobs.db").string(),
                                     "--workdir", (dir_ / "work").string(), "--ready-file", ready.string(), "--poll", "0.2"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv, (dir_ / ("server-" + std::to_string(++starts_) + ".log")).string());
    const bool up = eventually([&] { return fs::exists(ready) || process_->ended(); }, "the server's ready file");
    EXPECT_TRUE(up && fs::exists(ready)) << process_->output();
    if (fs::exists(ready)) port_ = json::parse(read_text(ready))["port"].get<int>();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30);
    return c;
  }
  ChildProcess& process() { return *process_; }
  int port() const { return port_; }

 private:
  fs::path dir_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
  static inline int starts_ = 0;
};

const json kJob = {{"model", "small_cnn"}, {"dataset", "synthetic"}, {"synthetic_size", 512}, {"epochs", 2},
                   {"pilot_steps", 6},     {"watch_every", 4}};

json get(const Server& s, const std::string& path) {
  auto r = s.client().Get(path);
  if (!r) return json{{"error", "no answer"}};
  return json::parse(r->body, nullptr, false);
}

int64_t submit(const Server& s, const json& job, int expected = 201) {
  auto r = s.client().Post("/v1/jobs", job.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return -1;
  EXPECT_EQ(r->status, expected) << r->body;
  return json::parse(r->body).value("id", int64_t{-1});
}

::testing::AssertionResult reaches(const Server& s, int64_t id, const std::string& state, std::chrono::seconds patience = 240s) {
  return eventually([&] { return get(s, "/v1/jobs/" + std::to_string(id)).value("state", "") == state; },
                    "job " + std::to_string(id) + " to be " + state, patience);
}

TEST(Serve, AJobRunsToItsEndAndTheApiShowsPlanProgressAndPrediction) {
  TempDir dir;
  Server server(dir);
  const int64_t id = submit(server, kJob);
  ASSERT_TRUE(reaches(server, id, "succeeded")) << get(server, "/v1/jobs/" + std::to_string(id)).dump(2);
  const json job = get(server, "/v1/jobs/" + std::to_string(id));
  std::vector<std::string> states;
  for (const auto& t : job["transitions"]) states.push_back(t["to"]);
  EXPECT_EQ(states, (std::vector<std::string>{"queued", "profiling", "planning", "training", "succeeded"}));
  EXPECT_EQ(job["attempts"].size(), 1u);
  EXPECT_TRUE(job["chosen"].is_object());
  EXPECT_GT(job["predicted_vs_measured"]["predicted_time_s"].get<double>(), 0);
  EXPECT_GT(job["predicted_vs_measured"]["measured_time_s"].get<double>(), 0);
  EXPECT_EQ(job["progress"]["fraction"], 1.0);
  EXPECT_TRUE(get(server, "/v1/jobs/" + std::to_string(id) + "/plan")["plan"]["front"].is_array());
  const json metrics = get(server, "/v1/jobs/" + std::to_string(id) + "/metrics?since=3");
  ASSERT_FALSE(metrics["records"].empty());
  for (const auto& r : metrics["records"]) EXPECT_GT(r["step"].get<int64_t>(), 3);
  auto prom = server.client().Get("/metrics");
  ASSERT_TRUE(prom);
  EXPECT_NE(prom->body.find("tula_jobs{state=\"succeeded\"} 1"), std::string::npos) << prom->body;
  EXPECT_NE(prom->body.find("tula_http_request_duration_seconds_bucket{route=\"/v1/jobs/{id}\""), std::string::npos);
  // A finished job cannot be cancelled, and can be deleted.
  auto cancel = server.client().Post("/v1/jobs/" + std::to_string(id) + "/cancel");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 409);
  EXPECT_NE(json::parse(cancel->body)["error"]["message"].get<std::string>().find("nothing to cancel"), std::string::npos);
  auto del = server.client().Delete("/v1/jobs/" + std::to_string(id));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 204);
  EXPECT_EQ(server.client().Get("/v1/jobs/" + std::to_string(id))->status, 404);
  server.process().send(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0);
}

TEST(Serve, AServerKilledMidTrainingReadoptsTheJobItLeftRunning) {
  TempDir dir;
  json job = kJob;
  job["synthetic_size"] = 2048;
  job["epochs"] = 4;
  int64_t id = 0;
  pid_t tune = 0;
  {
    Server server(dir);
    id = submit(server, job);
    ASSERT_TRUE(reaches(server, id, "training"));
    const json attempts = get(server, "/v1/jobs/" + std::to_string(id))["attempts"];
    tune = attempts[0]["pid"].get<pid_t>();
    server.process().send(SIGKILL);
    server.process().wait();
  }
  EXPECT_EQ(::kill(tune, 0), 0) << "the tune process outlives the server";
  Server again(dir);
  ASSERT_TRUE(reaches(again, id, "succeeded")) << get(again, "/v1/jobs/" + std::to_string(id)).dump(2);
  const json attempts = get(again, "/v1/jobs/" + std::to_string(id))["attempts"];
  EXPECT_EQ(attempts.size(), 1u) << "re-adopted, not started again: " << attempts.dump();
  EXPECT_EQ(attempts[0]["pid"].get<pid_t>(), tune);
  again.process().send(SIGTERM);
  EXPECT_EQ(again.process().wait(), 0);
}

TEST(Serve, ACancelledJobStopsWithItsCheckpointAndAStoppedServerResumesItsJobs) {
  TempDir dir;
  json job = kJob;
  job["synthetic_size"] = 2048;
  job["epochs"] = 6;
  Server server(dir, {"--max-running", "1"});
  const int64_t first = submit(server, job), second = submit(server, job);
  ASSERT_TRUE(reaches(server, first, "training"));
  EXPECT_EQ(get(server, "/v1/jobs/" + std::to_string(second))["state"], "queued") << "one at a time";
  auto cancel = server.client().Post("/v1/jobs/" + std::to_string(first) + "/cancel");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 202);
  ASSERT_TRUE(reaches(server, first, "cancelled"));
  ASSERT_TRUE(reaches(server, second, "training"));
  // SIGTERM: the server asks the running job to checkpoint, and the next server resumes it.
  server.process().send(SIGTERM);
  EXPECT_EQ(server.process().wait(180s), 0);
  EXPECT_FALSE(tula::service::lock_holder((dir.path() / "work" / "jobs" / (std::to_string(second) + ".lock")).string()))
      << "no process of the job is left running";
  Server again(dir);
  ASSERT_TRUE(reaches(again, second, "succeeded"));
  const json attempts = get(again, "/v1/jobs/" + std::to_string(second))["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_TRUE(attempts[1]["resumed"].get<bool>());
  again.process().send(SIGTERM);
  EXPECT_EQ(again.process().wait(), 0);
}

// Checkpointed stops with the server are not deaths: with no resume after a
// death allowed, a job stopped twice still finishes.
TEST(Serve, StopsWithTheServerDoNotCountAgainstAJobsResumes) {
  TempDir dir;
  json job = kJob;
  job["synthetic_size"] = 2048;
  job["epochs"] = 6;
  job["start_at"] = "2x64";
  job["no_replan"] = true;
  int64_t id = 0;
  int64_t steps_seen = 0;
  for (int stop = 0; stop < 2; ++stop) {
    Server server(dir, {"--max-resumes", "0"});
    if (stop == 0) id = submit(server, job);
    const std::string path = "/v1/jobs/" + std::to_string(id);
    // Stopped each time once it made steps since the last stop.
    ASSERT_TRUE(eventually([&] {
      const json m = get(server, path + "/metrics?since=" + std::to_string(steps_seen));
      return m.contains("records") && !m["records"].empty();
    }, "job " + std::to_string(id) + " to train past step " + std::to_string(steps_seen), 240s));
    steps_seen = get(server, path + "/metrics?since=" + std::to_string(steps_seen))["records"].back()["step"];
    server.process().send(SIGTERM);
    ASSERT_EQ(server.process().wait(180s), 0);
  }
  Server last(dir, {"--max-resumes", "0"});
  ASSERT_TRUE(reaches(last, id, "succeeded")) << get(last, "/v1/jobs/" + std::to_string(id)).dump(2);
  EXPECT_EQ(get(last, "/v1/jobs/" + std::to_string(id))["attempts"].size(), 3u);
  last.process().send(SIGTERM);
  EXPECT_EQ(last.process().wait(), 0);
}

// The store locked (another process's write transaction) while a job's tune
// process ends: the job still settles once the lock is gone, without a restart.
TEST(Serve, AJobThatEndsWhileTheStoreIsLockedSettlesOnceItIsFree) {
  TempDir dir;
  Server server(dir);
  const int64_t id = submit(server, kJob);
  ASSERT_TRUE(reaches(server, id, "training"));
  const std::string lock = (dir.path() / "work" / "jobs" / (std::to_string(id) + ".lock")).string();
  {
    tula::service::sql::Database db((dir.path() / "jobs.db").string());
    db.exec("BEGIN EXCLUSIVE");
    ASSERT_TRUE(eventually([&] { return !tula::service::lock_holder(lock); }, "job's tune process to end", 240s));
    ASSERT_TRUE(eventually([&] { return server.process().output().find("database is locked") != std::string::npos; },
                           "the server to meet the locked store", 120s))
        << server.process().output();
    db.exec("COMMIT");
  }
  ASSERT_TRUE(reaches(server, id, "succeeded", 120s)) << get(server, "/v1/jobs/" + std::to_string(id)).dump(2);
  server.process().send(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0);
}

TEST(Serve, TokensBodiesAndAddressesAreChecked) {
  TempDir dir;
  expect_tula_fails("serve --listen 0.0.0.0:0 --db " + dir.str() + "/db --workdir " + dir.str() + "/w", "--token-file");
  // Spelled like loopback, but it is not one (it does not even resolve).
  expect_tula_fails("serve --listen 127.example.invalid:0 --db " + dir.str() + "/db --workdir " + dir.str() + "/w",
                    "--token-file");
  const std::string token = (dir.path() / "token").string();
  std::ofstream(token) << "0123456789abcdef-test-token\n";
  ::chmod(token.c_str(), 0600);
  Server server(dir, {"--token-file", token, "--max-body", "4096"});
  auto c = server.client();
  auto denied = c.Post("/v1/jobs", kJob.dump(), "application/json");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  EXPECT_NE(json::parse(denied->body)["error"]["message"].get<std::string>().find("token"), std::string::npos);
  c.set_bearer_token_auth("0123456789abcdef-wrong-token");
  EXPECT_EQ(c.Post("/v1/jobs", kJob.dump(), "application/json")->status, 401);
  EXPECT_EQ(c.Get("/v1/jobs")->status, 401) << "reads need the token too";
  EXPECT_EQ(c.Get("/healthz")->status, 200) << "the health check needs none";
  c.set_bearer_token_auth("0123456789abcdef-test-token");
  auto big = c.Post("/v1/jobs", std::string(8192, ' ') + kJob.dump(), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(json::parse(big->body)["error"]["message"].get<std::string>().find("larger than 4096"), std::string::npos);
  auto bad = c.Post("/v1/jobs", R"({"epochs": 1, "data_dir": "/etc"})", "application/json");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(c.Get("/v1/jobs/99")->status, 404);
  EXPECT_EQ(c.Get("/v1/jobs?state=sleeping")->status, 400);
  server.process().send(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0);
}

}  // namespace
}  // namespace tula::testing
