#include "service/service.hpp"

#include <httplib.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/atomic_file.hpp"
#include "service/api.hpp"
#include "service/auth.hpp"

namespace tula::service {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

thread_local std::chrono::steady_clock::time_point t_request_start;

void check(const ServiceOptions& o) {
  if (o.db_path.empty()) throw std::invalid_argument("--db is required (the job store, a SQLite file)");
  if (o.workdir.empty()) throw std::invalid_argument("--workdir is required (where jobs write checkpoints and reports)");
  if (o.max_running < 1) throw std::invalid_argument("--max-running must be at least 1");
  if (o.max_resumes < 0) throw std::invalid_argument("--max-resumes must be at least 0");
  if (o.port < 0 || o.port > 65535) throw std::invalid_argument("--listen: the port must be 0-65535");
  if (o.backend != "local" && o.backend != "slurm") throw std::invalid_argument("--backend must be local or slurm");
  if (!is_loopback(o.host) && o.token_file.empty()) {
    throw std::invalid_argument("--listen " + o.host + " is not a loopback address: give --token-file so that only "
                                "holders of the token can submit and cancel jobs");
  }
}

std::vector<std::string> data_roots(const ServiceOptions& o) {
  std::vector<std::string> roots = o.data_roots;
  if (roots.empty()) roots = {"/usr/share/datasets", (fs::absolute(o.workdir) / "data").string()};
  for (auto& r : roots) {
    if (r.empty() || r[0] != '/') throw std::invalid_argument("--data-root " + r + " must be an absolute path");
  }
  return roots;
}

}  // namespace

namespace {

// The token check before routing, errors as JSON, and each request's time.
void install_handlers(httplib::Server& server, const ServiceOptions& o, const std::string& token,
                      RequestMetrics& metrics) {
  server.set_pre_routing_handler([&token](const httplib::Request& req, httplib::Response& res) {
    t_request_start = std::chrono::steady_clock::now();
    const bool mutating = req.method == "POST" || req.method == "DELETE" || req.method == "PUT" || req.method == "PATCH";
    if (mutating && !token.empty() && !constant_time_equal(bearer_token(req.get_header_value("Authorization")), token)) {
      send_error(res, 401, "this request needs the API token: 'Authorization: Bearer TOKEN' (missing or wrong)");
      res.set_header("WWW-Authenticate", "Bearer");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_error_handler([max_body = o.max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    switch (res.status) {
      case 404: return send_error(res, 404, "no such route: " + req.method + " " + req.path);
      case 413: return send_error(res, 413, "the request body is larger than " + std::to_string(max_body) + " bytes");
      case 405: return send_error(res, 405, "method " + req.method + " is not allowed on " + req.path);
      default: return send_error(res, res.status, "the request could not be served (HTTP " + std::to_string(res.status) + ")");
    }
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, "internal error: " + what);
  });
  server.set_logger([&metrics](const httplib::Request& req, const httplib::Response& res) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_request_start).count();
    metrics.observe(route_of(req.path), req.method, res.status, seconds);
  });
}

SupervisorOptions supervisor_options(const ServiceOptions& o) {
  SupervisorOptions so;
  so.workdir = fs::absolute(o.workdir).string();
  so.tula_binary = o.tula_binary.empty() ? fs::read_symlink("/proc/self/exe").string() : o.tula_binary;
  so.backend = o.backend;
  so.data_roots = data_roots(o);
  so.max_running = o.max_running;
  so.max_resumes = o.max_resumes;
  so.poll_s = o.poll_s;
  return so;
}

}  // namespace

int serve(const ServiceOptions& o) {
  check(o);
  const std::string token = o.token_file.empty() ? "" : read_token_file(o.token_file);
  fs::create_directories(o.workdir);
  if (const auto parent = fs::path(o.db_path).parent_path(); !parent.empty()) fs::create_directories(parent);

  // Signals are taken by one thread (sigwait); every thread started from
  // here on inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  Store store(o.db_path);
  EventLog events;
  ReportCache reports;
  const SupervisorOptions so = supervisor_options(o);
  Supervisor supervisor(store, events, reports, so);
  RequestMetrics metrics;
  ApiContext context{store, events, reports, supervisor, metrics, SpecRules{data_roots(o), o.backend}, token};
  context.max_event_streams = std::max(1, o.threads / 2);

  httplib::Server server;
  const int threads = o.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server.set_payload_max_length(o.max_body_bytes);
  // httplib writes a response's head and body apart; with Nagle's algorithm
  // the body then waits for the client's delayed ACK (40 ms a request).
  server.set_tcp_nodelay(true);
  install_handlers(server, o, token, metrics);
  add_routes(server, context);

  const int port = o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) throw std::invalid_argument("cannot listen on " + o.host + ":" + std::to_string(o.port) + " (in use, or not an address here)");

  supervisor.start();  // re-adopts or resumes what a previous server left
  spdlog::info("tula serve: http://{}:{}/ (store {}, jobs in {}, backend {}, {} at once)", o.host, port, o.db_path,
               so.workdir, o.backend, o.max_running);
  if (!o.ready_file.empty()) common::write_file_atomically(o.ready_file, json{{"port", port}, {"pid", ::getpid()}}.dump() + "\n");

  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    spdlog::info("tula serve: signal {}: stopping", sig);
    context.stopping = true;
    events.close();
    server.stop();
  });
  server.listen_after_bind();
  if (!context.stopping) {  // listen failed by itself: let the signal thread go
    context.stopping = true;
    ::kill(::getpid(), SIGTERM);
  }
  signals.join();
  supervisor.stop(o.stop_jobs_on_exit);
  spdlog::info("tula serve: stopped");
  return 0;
}

}  // namespace tula::service
