#include "service/request_guard.hpp"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include <fmt/format.h>

#include "service/auth.hpp"

namespace tula::service {

namespace {

const std::set<std::string> kLoopbackNames = {"localhost", "127.0.0.1", "[::1]"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "::ffff:10.0.0.1" (IPv4 on a dual-stack socket) as the browser names it: "10.0.0.1".
std::string unmapped(const std::string& address) {
  const std::string prefix = "::ffff:";
  if (address.size() > prefix.size() && lower(address.substr(0, prefix.size())) == prefix &&
      address.find('.') != std::string::npos) {
    return address.substr(prefix.size());
  }
  return address;
}

bool is_loopback_literal(const std::string& address) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return ::inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

// The names this connection may be reached by besides the server's own: the
// address it came in on, and on a loopback connection the loopback names
// (no other site can make its pages use those).
std::set<std::string> connection_names(const httplib::Request& req) {
  const std::string local = unmapped(req.local_addr);
  std::set<std::string> names;
  if (!local.empty()) names.insert(url_host(local));
  if (is_loopback_literal(local)) names.insert(kLoopbackNames.begin(), kLoopbackNames.end());
  return names;
}

std::string origin_of(const std::string& host, int port) {
  return "http://" + host + (port == 80 ? "" : ":" + std::to_string(port));
}

// The host of a Host header: "name:port" -> "name", "[v6]:port" -> "[v6]".
std::string host_of(const std::string& header) {
  const std::string h = lower(header);
  if (!h.empty() && h[0] == '[') return h.substr(0, h.find(']') + 1);
  const auto colon = h.find(':');
  return colon == std::string::npos ? h : h.substr(0, colon);
}

std::optional<Refusal> check_host(const SitePolicy& site, const httplib::Request& req) {
  if (req.get_header_value_count("Host") != 1) {
    return Refusal{400, fmt::format("a request names exactly one Host (it had {})", req.get_header_value_count("Host"))};
  }
  const std::string host = host_of(req.get_header_value("Host"));
  if (site.host_names.count(host) || connection_names(req).count(host)) return std::nullopt;
  return Refusal{403, "Host '" + host + "' is not a name of this server; a name people use to reach it (through a "
                      "proxy, or a DNS name of this machine) must be given to `tula serve --public-name`"};
}

std::optional<Refusal> check_origin(const SitePolicy& site, const httplib::Request& req) {
  if (!is_mutating(req.method) || !req.has_header("Origin")) return std::nullopt;
  const std::string origin = lower(req.get_header_value("Origin"));
  if (site.origins.count(origin)) return std::nullopt;
  for (const auto& name : connection_names(req)) {
    if (origin == origin_of(name, site.port)) return std::nullopt;
  }
  return Refusal{403, "a " + req.method + " from a page of another site (Origin " + origin +
                          ") is refused: only this server's own pages may change jobs"};
}

std::optional<Refusal> check_token(const SitePolicy& site, const httplib::Request& req) {
  if (site.token.empty() || is_public_route(req.method, req.path)) return std::nullopt;
  if (constant_time_equal(bearer_token(req.get_header_value("Authorization")), site.token)) return std::nullopt;
  return Refusal{401, "this request needs the API token: 'Authorization: Bearer TOKEN' (missing or wrong)"};
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 19 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::optional<Refusal> check_framing(const httplib::Request& req) {
  const size_t lengths = req.get_header_value_count("Content-Length");
  const bool chunked = req.has_header("Transfer-Encoding");
  if (lengths > 1) return Refusal{400, "a request has at most one Content-Length"};
  if (lengths == 1 && chunked) return Refusal{400, "a request has a Content-Length or a Transfer-Encoding, not both"};
  if (lengths == 1 && !all_digits(req.get_header_value("Content-Length"))) {
    return Refusal{400, "Content-Length must be a number (got '" + req.get_header_value("Content-Length") + "')"};
  }
  if (chunked && (req.get_header_value_count("Transfer-Encoding") != 1 ||
                  ::strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") != 0)) {
    return Refusal{501, "Transfer-Encoding '" + req.get_header_value("Transfer-Encoding") + "' is not supported (only chunked)"};
  }
  if (req.has_header("Content-Encoding") && lower(req.get_header_value("Content-Encoding")) != "identity") {
    return Refusal{415, "Content-Encoding '" + req.get_header_value("Content-Encoding") + "' is not supported: send the body as it is"};
  }
  return std::nullopt;
}

std::optional<Refusal> check_body(const httplib::Request& req, size_t max_body) {
  const bool chunked = req.has_header("Transfer-Encoding");
  const std::string length = req.get_header_value("Content-Length");
  if (!length.empty() && std::stoull(length) > max_body) {
    return Refusal{413, fmt::format("the request body is larger than {} bytes", max_body)};
  }
  const bool has_body = chunked || (!length.empty() && length != "0");
  if (!is_mutating(req.method) || (!has_body && !req.has_header("Content-Type"))) return std::nullopt;
  const std::string type = req.get_header_value("Content-Type");
  if (!is_json_media_type(type)) {
    return Refusal{415, "the body must be application/json (got " + (type.empty() ? std::string("no Content-Type") : type) + ")"};
  }
  return std::nullopt;
}

}  // namespace

SitePolicy site_policy(const ListenAddress& bound, bool loopback, const std::vector<PublicName>& public_names,
                       std::string token) {
  SitePolicy site;
  site.token = std::move(token);
  site.port = bound.port;
  if (!is_wildcard(bound.host)) site.host_names.insert(url_host(bound.host));
  if (loopback) site.host_names.insert(kLoopbackNames.begin(), kLoopbackNames.end());
  for (const auto& name : site.host_names) site.origins.insert(origin_of(name, bound.port));
  for (const auto& name : public_names) {
    site.host_names.insert(name.host);
    site.origins.insert(name.origin);
  }
  return site;
}

std::optional<Refusal> check_request(const SitePolicy& site, const httplib::Request& req, size_t max_body) {
  if (auto refused = check_host(site, req)) return refused;
  if (auto refused = check_origin(site, req)) return refused;
  if (auto refused = check_token(site, req)) return refused;
  if (auto refused = check_framing(req)) return refused;
  return check_body(req, max_body);
}

bool is_json_media_type(const std::string& content_type) {
  std::string type = content_type.substr(0, content_type.find(';'));
  const auto first = type.find_first_not_of(" \t");
  const auto last = type.find_last_not_of(" \t");
  type = first == std::string::npos ? "" : type.substr(first, last - first + 1);
  return lower(type) == "application/json";
}

bool is_mutating(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

bool is_public_route(const std::string& method, const std::string& path) {
  static const std::regex job_page(R"(/jobs/\d+)");
  if (method != "GET" && method != "HEAD") return false;
  return path == "/healthz" || path == "/" || path.rfind("/static/", 0) == 0 || std::regex_match(path, job_page);
}

}  // namespace tula::service
