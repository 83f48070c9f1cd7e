#include "service/http_service.hpp"

#include <chrono>

#include <fmt/format.h>

#include "records/states.hpp"
#include "service/response_headers.hpp"

namespace tula::service {

namespace {

void refuse(httplib::Response& res, const Refusal& refusal) {
  send_error(res, refusal.status, refusal.message);
  if (refusal.status == 401) res.set_header("WWW-Authenticate", "Bearer");
}

// The state an event stream's `end` names once its job is over: its final
// state, or "deleted"; none while it runs.
std::optional<nlohmann::json> job_ending(Store& store, int64_t id) {
  const auto job = store.job(id);
  if (!job) return nlohmann::json("deleted");
  if (records::is_final(job->state)) return nlohmann::json(job->state);
  return std::nullopt;
}

// The connection limits with the routes' body limit: bodies are read up to
// it among the connections waiting (head_wait.hpp) before a request goes on.
ConnectionLimits with_body_limit(ConnectionLimits limits, size_t max_body) {
  limits.max_body = max_body;
  return limits;
}

}  // namespace

HttpService::HttpService(HttpOptions options, ApiContext& context)
    : options_(std::move(options)), context_(context),
      server_(with_body_limit(options_.limits, context.max_body_bytes), options_.threads),
      pump_(context.events, [&store = context.store](int64_t id) { return job_ending(store, id); },
            context.event_keepalive) {
  context_.event_pump = &pump_;
  // Bodies are read by the routes (api.cpp), which stop at the limit; this
  // is the library's own check, for any body it would read.
  server_.set_payload_max_length(context_.max_body_bytes);
  server_.set_keep_alive_timeout(std::chrono::duration_cast<std::chrono::seconds>(options_.limits.idle).count());
  // httplib writes a response's head and body apart; with Nagle's algorithm
  // the body then waits for the client's delayed ACK (40 ms a request).
  server_.set_tcp_nodelay(true);
  install_handlers();
  add_routes(server_, context_);
}

void HttpService::install_handlers() {
  // A client that asks before sending its body (Expect: 100-continue) learns
  // at once that it would be refused, and sends none of it.
  server_.set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    const auto refusal = check_request(site_, req, context_.max_body_bytes);
    if (!refusal) return 100;
    refuse(res, *refusal);
    return refusal->status;
  });
  server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (const auto refusal = check_request(site_, req, context_.max_body_bytes)) {
      refuse(res, *refusal);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (request_timed_out()) {
      return send_error(res, 408, "the request did not arrive within " + deadline_text(options_.limits));
    }
    if (!res.body.empty()) return;
    switch (res.status) {
      case 404: return send_error(res, 404, "no such route: " + req.method + " " + req.path);
      case 413:
        return send_error(res, 413, fmt::format("the request body is larger than {} bytes", context_.max_body_bytes));
      case 405: return send_error(res, 405, "method " + req.method + " is not allowed on " + req.path);
      default:
        return send_error(res, res.status, fmt::format("the request could not be served (HTTP {})", res.status));
    }
  });
  server_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, "internal error: " + what);
  });
  server_.set_post_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    add_security_headers(req.path, res);
  });
  server_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    context_.metrics.observe(route_of(req.path), req.method, res.status, request_seconds());
  });
}

int HttpService::bind() {
  const auto& l = options_.listen;
  const int port = l.port == 0 ? server_.bind_to_any_port(l.host) : (server_.bind_to_port(l.host, l.port) ? l.port : -1);
  if (port < 0) {
    throw std::invalid_argument(
        fmt::format("cannot listen on {}:{} (in use, or not an address here)", url_host(l.host), l.port));
  }
  server_.widen_backlog();
  site_ = site_policy({l.host, port}, options_.loopback, options_.public_names, options_.token);
  return port;
}

bool HttpService::listen() { return server_.listen_after_bind(); }

void HttpService::stop() {
  server_.stop_serving();
  pump_.stop();  // after the request threads: none hands it a stream any more
}

}  // namespace tula::service
