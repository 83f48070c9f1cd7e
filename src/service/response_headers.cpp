#include "service/response_headers.hpp"

#include <httplib.h>

#include <nlohmann/json.hpp>

namespace tula::service {

namespace {

// The pages: script and style only from the server's own files (no inline
// script at all). Style attributes stay allowed: the SVG charts and the
// progress bars are drawn with them, and with no script, no external
// source and no <style> they can only restyle the page.
const char* const kPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
// A job's standalone report: one inline <style> and no script at all.
const char* const kReportPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'; "
    "frame-ancestors 'none'";
// JSON, text and event streams: nothing to load, nothing to run.
const char* const kDataPolicy = "default-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

const SecurityHeaders& security_headers(const std::string& path, const std::string& content_type) {
  static const auto with = [](const char* policy) {
    return SecurityHeaders{{"Content-Security-Policy", policy},
                           {"X-Frame-Options", "DENY"},
                           {"X-Content-Type-Options", "nosniff"},
                           {"Referrer-Policy", "no-referrer"},
                           {"Cache-Control", "no-store"}};
  };
  static const SecurityHeaders page = with(kPagePolicy), report = with(kReportPolicy), data = with(kDataPolicy);
  const bool html = content_type.rfind("text/html", 0) == 0;
  return !html ? data : ends_with(path, "/report") ? report : page;
}

void add_security_headers(const std::string& path, httplib::Response& res) {
  for (const auto& [name, value] : security_headers(path, res.get_header_value("Content-Type"))) {
    if (res.has_header(name.c_str())) res.headers.erase(name);
    res.headers.emplace(name, value);
  }
}

std::string error_body(int status, const std::string& message) {
  const nlohmann::json body = {{"error", {{"status", status}, {"message", message}}}};
  // Replace, not throw on, bytes that are not UTF-8: a message may quote the request.
  return body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace tula::service
