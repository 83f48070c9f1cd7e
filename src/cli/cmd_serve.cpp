// `tula serve`: Tula as an online service (src/service/service.hpp).
#include <memory>

#include "cli/commands.hpp"
#include "service/listen_address.hpp"
#include "service/service.hpp"

namespace tula::cli {
namespace {

struct ServeCommand {
  service::ServiceOptions options;
  std::string listen = "127.0.0.1:8470";
};

void run(ServeCommand& cmd) {
  auto& o = cmd.options;
  const service::ListenAddress listen = service::parse_listen(cmd.listen);
  o.host = listen.host;
  o.port = listen.port;
  exit_status() = service::serve(o);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto cmd = std::make_shared<ServeCommand>();
  auto& o = cmd->options;
  auto* sub = app.add_subcommand("serve", "Run Tula as a service: HTTP API, job queue, durable store, web page");
  sub->footer(
      "\nThe API is under /v1 (docs/api.md); the web page at /. Jobs run as `tula tune` processes that\n"
      "outlive the server: a restarted server re-adopts them. SIGTERM stops the server and asks running\n"
      "jobs to checkpoint; they resume at the next start.\n"
      "\nExample:\n  tula serve --db ~/.tula/jobs.db --workdir ~/.tula/work --max-running 1");
  sub->add_option("--listen", cmd->listen, "HOST:PORT or [IPv6]:PORT to listen on (port 0: any free one)")->capture_default_str();
  sub->add_option("--public-name", o.public_names,
                  "[SCHEME://]NAME[:PORT] people reach the server by, as typed into a browser (through a proxy, or a "
                  "DNS name of this machine); repeatable. Requests for any other name are refused");
  sub->add_option("--db", o.db_path, "The job store (SQLite file; created if missing)")->required();
  sub->add_option("--workdir", o.workdir, "Where jobs keep checkpoints, metrics and reports")->required();
  sub->add_option("--backend", o.backend, "Where workers run: local or slurm")->capture_default_str();
  sub->add_option("--max-running", o.max_running, "Jobs that run at once; the rest wait in order")->capture_default_str();
  sub->add_option("--max-resumes", o.max_resumes,
                  "Resumes of a job whose tune process died (killed, crashed) before it fails; checkpointed "
                  "stops do not count")->capture_default_str();
  sub->add_option("--token-file", o.token_file,
                  "API token (mode 600, printable); every route but /healthz and the pages' code then needs it. "
                  "Required when listening beyond loopback");
  sub->add_option("--data-root", o.data_roots, "A directory job specs may name paths in (repeatable; default /usr/share/datasets and WORKDIR/data)");
  sub->add_option("--max-body", o.max_body_bytes, "Largest request body in bytes")->capture_default_str();
  sub->add_option("--threads", o.threads, "Request threads (an open event stream holds none: the event pump writes it)")->capture_default_str();
  sub->add_option("--request-timeout", o.request_timeout_s, "Seconds a request's headers and body may take to arrive")
      ->capture_default_str();
  sub->add_option("--max-connections-per-client", o.max_connections_per_client,
                  "Connections one client address may hold at once (default: half of --threads; behind a proxy, "
                  "the proxy is one client)");
  sub->add_option("--max-connections", o.max_connections,
                  "Connections open at once, all clients together; more are answered 503 at once (each waiting "
                  "one costs a descriptor and at most its 64 KiB head)")->capture_default_str();
  sub->add_option("--ready-file", o.ready_file, "Write {\"port\": P, \"pid\": N} here once listening");
  sub->add_option("--poll", o.poll_s, "Seconds between looks at running jobs")->capture_default_str();
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
