// What every request passes before it is routed, in this order:
//  1. Host names this server: one of the names it was started with (the
//     listen address, localhost and the loopback literals on a loopback
//     connection, the address the connection came in on, --public-name).
//     A page of another site whose name was made to resolve here (DNS
//     rebinding) sends its own name and is refused.
//  2. A mutating request (POST, PUT, PATCH, DELETE) that carries an Origin
//     (browsers always send one) comes from a page of this server. Clients
//     that are not browsers send none and pass.
//  3. With a token, every route but /healthz and the pages' code (which hold
//     no data) carries it.
//  4. The body's framing is one the server reads safely: a Content-Length or
//     "Transfer-Encoding: chunked", never both, and no Content-Encoding.
//  5. A body announced above the limit is refused before it is read.
//  6. A mutating request's Content-Type, when it has one or a body, is
//     exactly application/json: a cross-site HTML form can send none other
//     than its three form types, and a script must ask first (CORS) to send
//     it, which this server never allows.
// No LibTorch here.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "service/listen_address.hpp"

namespace httplib {
struct Request;
}

namespace tula::service {

// The names and origins that are this server's, and its token.
struct SitePolicy {
  std::string token;                   // empty: no route needs one (loopback only)
  int port = 0;                        // the port it listens on
  std::set<std::string> host_names;    // url_host form, besides the connection's own address
  std::set<std::string> origins;       // "scheme://host[:port]", besides the connection's own address
};

// For a server listening on `bound` (its real port, once bound).
SitePolicy site_policy(const ListenAddress& bound, bool loopback, const std::vector<PublicName>& public_names,
                       std::string token);

struct Refusal {
  int status;
  std::string message;
};

// The first check of the list above that `req` fails, or nothing.
std::optional<Refusal> check_request(const SitePolicy& site, const httplib::Request& req, size_t max_body);

// "application/json", in any case, with or without parameters ("; charset=utf-8").
bool is_json_media_type(const std::string& content_type);

bool is_mutating(const std::string& method);

// The routes anyone may read: /healthz, and the pages' shells and their
// script and style, which hold no data (the data comes through the API).
bool is_public_route(const std::string& method, const std::string& path);

}  // namespace tula::service
