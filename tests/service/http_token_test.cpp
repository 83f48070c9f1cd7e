// A server with a token: every route but /healthz and the pages' code (the
// shells, their script and style, which hold no data) needs it.
#include <gtest/gtest.h>

#include "service/http_fixture.hpp"

namespace tula::service::testing {
namespace {

const std::string kToken = "0123456789abcdef-test-token";

HttpOptions with_token() {
  HttpOptions http = InProcessServer::loopback();
  http.token = kToken;
  return http;
}

TEST(HttpToken, EveryRouteWithDataNeedsTheToken) {
  InProcessServer server(with_token());
  auto c = server.client();
  const auto job = c.Post("/v1/jobs", R"({"model": "small_cnn", "dataset": "synthetic", "epochs": 2})", "application/json");
  EXPECT_EQ(job->status, 401) << job->body;
  EXPECT_EQ(job->get_header_value("WWW-Authenticate"), "Bearer");
  for (const std::string path : {"/v1/jobs", "/v1/jobs/1", "/v1/jobs/1/metrics", "/v1/jobs/1/plan", "/v1/jobs/1/events",
                                 "/metrics", "/jobs/1/fragment", "/jobs/1/report", "/no/such/route"}) {
    const auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path << ": " << r->body;
  }
  c.set_bearer_token_auth("0123456789abcdef-wrong-token");
  EXPECT_EQ(c.Get("/v1/jobs")->status, 401);
  c.set_bearer_token_auth(kToken.c_str());
  EXPECT_EQ(c.Post("/v1/jobs", R"({"model": "small_cnn", "dataset": "synthetic", "epochs": 2})", "application/json")->status, 201);
  for (const std::string path : {"/v1/jobs", "/v1/jobs/1", "/metrics", "/jobs/1/fragment"}) {
    EXPECT_EQ(c.Get(path)->status, 200) << path;
  }
}

TEST(HttpToken, TheHealthCheckAndThePagesCodeNeedNone) {
  InProcessServer server(with_token());
  auto c = server.client();
  for (const std::string path : {"/healthz", "/", "/jobs/1", "/static/tula.js", "/static/tula.css"}) {
    const auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
  }
  // A job's page is a shell: the job's data comes through the API.
  c.set_bearer_token_auth(kToken.c_str());
  ASSERT_EQ(c.Post("/v1/jobs", R"({"model": "lenet5", "dataset": "synthetic", "epochs": 2})", "application/json")->status, 201);
  const auto page = server.client().Get("/jobs/1");
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body.find("synthetic"), std::string::npos) << page->body;
}

}  // namespace
}  // namespace tula::service::testing
