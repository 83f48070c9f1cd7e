// Requests from pages of other sites on a real loopback server without a
// token: a browser's cross-site POST (which carries its page's Origin), a
// form's body types, and a page of another name resolved to this server
// (DNS rebinding) are refused; clients that are not browsers still pass.
#include <gtest/gtest.h>

#include "service/http_fixture.hpp"

namespace tula::service::testing {
namespace {

const std::string kJob = R"({"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 2})";

httplib::Result post(const InProcessServer& server, const std::string& path, const httplib::Headers& headers,
                     const std::string& body, const std::string& type) {
  return server.client().Post(path, headers, body, type);  // no Content-Type when `type` is empty
}

int64_t submit(InProcessServer& server) {
  const auto r = server.client().Post("/v1/jobs", kJob, "application/json");
  EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  return r ? nlohmann::json::parse(r->body)["id"].get<int64_t>() : -1;
}

TEST(HttpCrossSite, ASubmitFromAnotherSitesPageIsRefused) {
  InProcessServer server;
  for (const std::string type : {"application/json", "", "text/plain"}) {
    const auto r = post(server, "/v1/jobs", {{"Origin", "http://evil.example"}}, kJob, type);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << type << ": " << r->body;
  }
  EXPECT_TRUE(server.store().jobs(std::nullopt, 0, 10).empty());
  const auto own = post(server, "/v1/jobs", {{"Origin", server.origin()}}, kJob, "application/json");
  EXPECT_EQ(own->status, 201) << "the server's own page may submit: " << own->body;
  const auto local = post(server, "/v1/jobs", {{"Origin", "http://localhost:" + std::to_string(server.port())}}, kJob,
                          "application/json");
  EXPECT_EQ(local->status, 201) << local->body;
}

TEST(HttpCrossSite, ABodyMustBeExactlyApplicationJson) {
  InProcessServer server;
  for (const std::string type : {"", "application/jsonp-evil", "text/plain", "application/x-www-form-urlencoded",
                                 "multipart/form-data; boundary=x", "application/json-seq"}) {
    const auto r = post(server, "/v1/jobs", {}, kJob, type);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 415) << "'" << type << "': " << r->body;
  }
  EXPECT_TRUE(server.store().jobs(std::nullopt, 0, 10).empty());
  for (const std::string type : {"application/json", "application/json; charset=utf-8", "Application/JSON"}) {
    const auto r = post(server, "/v1/jobs", {}, kJob, type);
    EXPECT_EQ(r->status, 201) << type << ": " << r->body;
  }
}

TEST(HttpCrossSite, ACancelFromAnotherSitesPageIsRefusedAndTheCommandLinesIsNot) {
  InProcessServer server;
  const int64_t id = submit(server);
  const std::string path = "/v1/jobs/" + std::to_string(id) + "/cancel";
  const auto cross = post(server, path, {{"Origin", "http://evil.example"}}, "", "");
  EXPECT_EQ(cross->status, 403) << cross->body;
  const auto form = post(server, path, {}, "", "application/x-www-form-urlencoded");
  EXPECT_EQ(form->status, 415) << "a form's body type: " << form->body;
  EXPECT_FALSE(server.store().job(id)->cancel_requested);
  const auto gone = server.client().Delete("/v1/jobs/" + std::to_string(id), {{"Origin", "null"}});
  EXPECT_EQ(gone->status, 403) << gone->body;
  // As `tula jobs cancel` sends it: no Origin, no body.
  const auto cli = server.client().Post(path);
  EXPECT_EQ(cli->status, 202) << cli->body;
  EXPECT_TRUE(server.store().job(id)->cancel_requested);
}

TEST(HttpCrossSite, AHostThatIsNotThisServersNameIsRefused) {
  InProcessServer server;
  const std::string port = std::to_string(server.port());
  for (const std::string& host : {"attacker.example:" + port, "127.0.0.1.nip.example:" + port, "localhost.evil:" + port}) {
    const auto r = server.client().Get("/v1/jobs", {{"Host", host}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << host << ": " << r->body;
  }
  for (const std::string& host : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LocalHost", "[::1]:" + port}) {
    const auto r = server.client().Get("/v1/jobs", {{"Host", host}});
    EXPECT_EQ(r->status, 200) << host << ": " << r->body;
  }
}

TEST(HttpCrossSite, APublicNameIsOneOfTheServersNamesAndOrigins) {
  HttpOptions http = InProcessServer::loopback();
  http.public_names = {parse_public_name("https://tula.example.com")};
  InProcessServer server(http);
  const auto read = server.client().Get("/v1/jobs", {{"Host", "tula.example.com"}});
  EXPECT_EQ(read->status, 200) << read->body;
  const auto own = post(server, "/v1/jobs", {{"Host", "tula.example.com"}, {"Origin", "https://tula.example.com"}}, kJob,
                        "application/json");
  EXPECT_EQ(own->status, 201) << own->body;
  const auto plain = post(server, "/v1/jobs", {{"Origin", "http://tula.example.com"}}, kJob, "application/json");
  EXPECT_EQ(plain->status, 403) << "another scheme is another origin: " << plain->body;
}

TEST(HttpCrossSite, AServerOnIpv6LoopbackKnowsItsOwnNames) {
  HttpOptions http = InProcessServer::loopback();
  http.listen = {"::1", 0};
  http.loopback = resolves_to_loopback_only("::1");
  ASSERT_TRUE(http.loopback);
  std::optional<InProcessServer> server;
  try {
    server.emplace(http);
  } catch (const std::invalid_argument& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  httplib::Client c("::1", server->port());
  c.set_read_timeout(60);
  const std::string origin = "http://[::1]:" + std::to_string(server->port());
  const auto own = c.Post("/v1/jobs", {{"Origin", origin}}, kJob, "application/json");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 201) << own->body;
  const auto cross = c.Post("/v1/jobs", {{"Origin", "http://[::2]:" + std::to_string(server->port())}}, kJob, "application/json");
  EXPECT_EQ(cross->status, 403) << cross->body;
}

}  // namespace
}  // namespace tula::service::testing
