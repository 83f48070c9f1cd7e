// `tula serve` end to end, as a team runs it: a job submitted, planned,
// trained by a real tune process and shown by the API.
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
#include "service/end_to_end/serve_fixture.hpp"
#include "service/sqlite.hpp"
#include "service/tune_process.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

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

}  // namespace
}  // namespace tula::testing
