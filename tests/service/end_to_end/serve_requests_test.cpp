// `tula serve` checks what reaches it: tokens, bodies and listen addresses.
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
