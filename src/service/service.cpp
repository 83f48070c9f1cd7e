#include "service/service.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/atomic_file.hpp"
#include "service/auth.hpp"
#include "service/http_service.hpp"

namespace tula::service {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void check(const ServiceOptions& o, bool loopback) {
  if (o.db_path.empty()) throw std::invalid_argument("--db is required (the job store, a SQLite file)");
  if (o.workdir.empty()) throw std::invalid_argument("--workdir is required (where jobs write checkpoints and reports)");
  if (o.max_running < 1) throw std::invalid_argument("--max-running must be at least 1");
  if (o.max_resumes < 0) throw std::invalid_argument("--max-resumes must be at least 0");
  if (o.port < 0 || o.port > 65535) throw std::invalid_argument("--listen: the port must be 0-65535");
  if (o.backend != "local" && o.backend != "slurm") throw std::invalid_argument("--backend must be local or slurm");
  if (o.threads < 2) throw std::invalid_argument("--threads must be at least 2");
  if (o.request_timeout_s <= 0) throw std::invalid_argument("--request-timeout must be more than 0 seconds");
  if (o.max_connections < 1) throw std::invalid_argument("--max-connections must be at least 1");
  if (o.max_connections_per_client < 0) throw std::invalid_argument("--max-connections-per-client must be at least 1 (0: half of --threads)");
  if (!loopback && o.token_file.empty()) {
    throw std::invalid_argument("--listen " + url_host(o.host) + " is not a loopback address (or does not resolve): give "
                                "--token-file so that only holders of the token can use the server");
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

HttpOptions http_options(const ServiceOptions& o, bool loopback, const std::string& token) {
  HttpOptions h;
  h.listen = {o.host, o.port};
  h.loopback = loopback;
  for (const auto& name : o.public_names) h.public_names.push_back(parse_public_name(name));
  h.token = token;
  h.threads = o.threads;
  h.limits.request_deadline = std::chrono::milliseconds(static_cast<int64_t>(o.request_timeout_s * 1000));
  // Half by default: one address (one client, or everyone behind one NAT)
  // never holds every request thread.
  h.limits.per_client = o.max_connections_per_client > 0 ? o.max_connections_per_client : std::max(1, o.threads / 2);
  h.limits.total = o.max_connections;
  return h;
}

// Room for `connections` sockets besides the store, the jobs' files and
// the logs: the soft limit on open descriptors raised toward the hard one.
void allow_descriptors(int connections) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = static_cast<rlim_t>(connections) + 256;
  if (limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &limit);
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
  const bool loopback = resolves_to_loopback_only(o.host);
  check(o, loopback);
  const std::string token = o.token_file.empty() ? "" : read_token_file(o.token_file);
  const HttpOptions http = http_options(o, loopback, token);
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
  ApiContext context{store, events, reports, supervisor, metrics, SpecRules{data_roots(o), o.backend}};
  context.max_body_bytes = o.max_body_bytes;
  // An open stream is a connection on the event pump, not a request thread:
  // the caps leave half of the connections, and of each client's, to requests.
  context.max_event_streams = std::max(1, http.limits.total / 2);
  context.max_event_streams_per_client = std::max(1, http.limits.per_client / 2);
  allow_descriptors(o.max_connections);
  HttpService server(http, context);
  const int port = server.bind();

  supervisor.start();  // re-adopts or resumes what a previous server left
  spdlog::info("tula serve: http://{}:{}/ (store {}, jobs in {}, backend {}, {} at once)", url_host(o.host), port, o.db_path,
               so.workdir, o.backend, o.max_running);
  if (!o.ready_file.empty()) common::write_file_atomically(o.ready_file, json{{"port", port}, {"pid", ::getpid()}}.dump() + "\n");

  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    spdlog::info("tula serve: signal {}: stopping", sig);
    context.stopping = true;
    server.stop();
  });
  server.listen();
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
