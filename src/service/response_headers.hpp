// The headers every answer of the server carries: a Content-Security-Policy
// that lets a page load nothing from anywhere else and run only the
// server's own script, no framing by other sites, no type sniffing, no
// referrer, and nothing kept in caches (the answers are job data). No
// LibTorch here.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace httplib {
struct Response;
}

namespace tula::service {

using SecurityHeaders = std::vector<std::pair<std::string, std::string>>;
// The security headers for an answer of this Content-Type to this path
// (built once: every answer carries them).
const SecurityHeaders& security_headers(const std::string& path, const std::string& content_type);

// Sets them on `res`, replacing any of the same name.
void add_security_headers(const std::string& path, httplib::Response& res);

// The one error body every answer uses: {"error": {"status": N, "message": "..."}}.
std::string error_body(int status, const std::string& message);

}  // namespace tula::service
