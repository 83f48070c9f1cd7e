// The service's HTTP routes: the /v1 JSON API (docs/api.md), /healthz,
// /metrics, and the web pages. Every error is a JSON body
// {"error": {"status": N, "message": "..."}} naming the problem.
// No LibTorch here.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "service/event_log.hpp"
#include "service/job_files.hpp"
#include "service/job_spec.hpp"
#include "service/request_metrics.hpp"
#include "service/store.hpp"
#include "service/supervisor.hpp"

namespace httplib {
class Server;
struct Response;
}

namespace tula::service {

class EventPump;

struct ApiContext {
  Store& store;
  EventLog& events;
  ReportCache& reports;
  Supervisor& supervisor;
  RequestMetrics& metrics;
  SpecRules rules;
  size_t max_body_bytes = 1 << 20;  // a request body, as decoded
  int max_event_streams = 16;       // open at once (each a connection on the event pump, no thread)
  int max_event_streams_per_client = 4;  // one address's share of them
  EventPump* event_pump = nullptr;  // where event streams go once begun (set by HttpService)
  std::chrono::milliseconds event_keepalive{10000};  // a comment on a quiet event stream, this often
  std::atomic<bool> stopping{false};
  std::atomic<int> event_streams{0};
  std::mutex streams_mutex{};
  std::map<std::string, int> streams_by_client{};
};

void add_routes(httplib::Server& server, ApiContext& context);

// Answers with the one error body (response_headers.hpp).
void send_error(httplib::Response& res, int status, const std::string& message);

// The route pattern a path is counted under ("/v1/jobs/{id}", ...; "other").
std::string route_of(const std::string& path);

}  // namespace tula::service
