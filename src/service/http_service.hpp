// The HTTP side of `tula serve` over its store, queue and events: the
// server (http_server.hpp), the checks every request passes before routing
// (request_guard.hpp), the routes (api.hpp), errors as JSON, the security
// headers on every answer, and each request counted in the metrics.
// Everything `serve` has but signals and the supervisor's life, so that
// tests run it in their own process. No LibTorch here.
#pragma once
#include <string>
#include <vector>

#include "service/api.hpp"
#include "service/event_pump.hpp"
#include "service/http_server.hpp"
#include "service/listen_address.hpp"
#include "service/request_guard.hpp"

namespace tula::service {

struct HttpOptions {
  ListenAddress listen;                  // port 0: any free one
  bool loopback = true;                  // the listen host resolves to loopback only
  std::vector<PublicName> public_names;  // --public-name
  std::string token;                     // empty: no route needs one (loopback only)
  int threads = 32;                      // request threads (an event stream holds none once begun)
  ConnectionLimits limits;
};

class HttpService {
 public:
  // `context.max_body_bytes` is the body limit.
  HttpService(HttpOptions options, ApiContext& context);

  // Binds the listen address; returns the port. Throws std::invalid_argument
  // when it cannot (in use, or not an address here).
  int bind();
  // Serves until stop(); false when it stopped by itself.
  bool listen();
  void stop();

 private:
  void install_handlers();

  HttpOptions options_;
  ApiContext& context_;
  SitePolicy site_;  // complete once bound (it needs the port)
  GuardedServer server_;
  // After the server: its streams hold places among the server's client
  // caps, so it goes first.
  EventPump pump_;
};

}  // namespace tula::service
