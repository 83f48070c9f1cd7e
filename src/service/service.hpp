// `tula serve`: Tula as an online service. An HTTP/JSON API under /v1
// (docs/api.md), a web page, Prometheus metrics, a durable SQLite store and
// a job queue over the tune runner, in one process. The jobs' tune
// processes outlive it: a server killed at any moment restarts from its
// store and re-adopts them. No LibTorch here.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace tula::service {

struct ServiceOptions {
  std::string host = "127.0.0.1";       // an IPv6 literal without brackets
  int port = 8470;
  std::vector<std::string> public_names;  // [SCHEME://]NAME[:PORT] people reach the server by (a proxy)
  std::string db_path;
  std::string workdir;
  std::string backend = "local";
  int max_running = 1;
  int max_resumes = 5;                  // a job whose tune process died more often than this fails
  std::string token_file;                // required unless host resolves to loopback only
  std::vector<std::string> data_roots;  // where job specs may point; empty: the data sets' place and workdir/data
  size_t max_body_bytes = 1 << 20;
  std::string tula_binary;              // runs `tula tune`
  double poll_s = 0.5;
  int threads = 32;                     // request threads (each event stream holds one)
  double request_timeout_s = 15;        // a request's headers and body must arrive within this
  int max_connections_per_client = 0;   // connections one client address holds at once; 0: half of threads
  int max_connections = 1000;           // connections open at once, all clients together
  bool stop_jobs_on_exit = true;        // SIGTERM: jobs checkpoint and resume at the next start
  std::string ready_file;               // written (with the port) once the server listens
};

// Runs until SIGINT or SIGTERM; returns the exit status. Throws
// std::invalid_argument for bad options.
int serve(const ServiceOptions& options);

}  // namespace tula::service
