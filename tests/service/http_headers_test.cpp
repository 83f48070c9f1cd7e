// The security headers on every answer, and pages that run no inline script.
#include <gtest/gtest.h>

#include <regex>

#include "service/http_fixture.hpp"

namespace tula::service::testing {
namespace {

void expect_security_headers(const httplib::Response& r, const std::string& what) {
  EXPECT_EQ(r.get_header_value("X-Frame-Options"), "DENY") << what;
  EXPECT_EQ(r.get_header_value("X-Content-Type-Options"), "nosniff") << what;
  EXPECT_EQ(r.get_header_value("Cache-Control"), "no-store") << what;
  const std::string policy = r.get_header_value("Content-Security-Policy");
  EXPECT_NE(policy.find("default-src 'none'"), std::string::npos) << what << ": " << policy;
  EXPECT_NE(policy.find("frame-ancestors 'none'"), std::string::npos) << what << ": " << policy;
  EXPECT_EQ(policy.find("http"), std::string::npos) << what << " allows an outside source: " << policy;
  EXPECT_EQ(policy.find('*'), std::string::npos) << what << ": " << policy;
}

TEST(HttpHeaders, EveryAnswerCarriesTheSecurityHeaders) {
  InProcessServer server;
  auto c = server.client();
  ASSERT_EQ(c.Post("/v1/jobs", R"({"model": "small_cnn", "dataset": "synthetic", "epochs": 2})", "application/json")->status, 201);
  for (const std::string path : {"/", "/jobs/1", "/jobs/1/fragment", "/v1/jobs", "/v1/jobs/1", "/v1/jobs/99", "/metrics",
                                 "/healthz", "/static/tula.js", "/static/tula.css", "/no/such/route"}) {
    const auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    expect_security_headers(*r, path);
  }
  const auto refused = c.Post("/v1/jobs", "{}", "text/plain");
  EXPECT_EQ(refused->status, 415);
  expect_security_headers(*refused, "a refused POST");
}

TEST(HttpHeaders, ThePagesRunOnlyTheServersOwnScriptFile) {
  InProcessServer server;
  auto c = server.client();
  for (const std::string path : {"/", "/jobs/1"}) {
    const auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    const std::string policy = r->get_header_value("Content-Security-Policy");
    EXPECT_NE(policy.find("script-src 'self';"), std::string::npos) << policy;
    std::string rest = policy;
    rest.erase(rest.find("style-src-attr 'unsafe-inline'"), 30);
    EXPECT_EQ(rest.find("unsafe"), std::string::npos) << "only style attributes may be inline: " << policy;
    static const std::regex inline_script(R"(<script(?![^>]*\bsrc=)[^>]*>)"), handler(R"(\son[a-z]+=)"), style("<style");
    EXPECT_FALSE(std::regex_search(r->body, inline_script)) << path << " has an inline script";
    EXPECT_FALSE(std::regex_search(r->body, handler)) << path << " has an inline event handler";
    EXPECT_FALSE(std::regex_search(r->body, style)) << path << " has an inline style sheet";
    EXPECT_NE(r->body.find("<script src=\"/static/tula.js\""), std::string::npos) << r->body;
  }
}

}  // namespace
}  // namespace tula::service::testing
