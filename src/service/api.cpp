#include "service/api.hpp"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "records/states.hpp"
#include "service/event_pump.hpp"
#include "service/http_server.hpp"
#include "service/job_view.hpp"
#include "service/request_guard.hpp"
#include "service/response_headers.hpp"
#include "service/web_page.hpp"
#include "service/what_if_plan.hpp"
#include "tune/report_html.hpp"
#include "common/remove_tree.hpp"

namespace tula::service {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// An answer with a status and a message, thrown by a handler.
struct HttpError {
  int status;
  std::string message;
};

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Replace, not throw on, bytes that are not UTF-8: a message may quote the request.
  res.set_content(body.dump(2, ' ', false, json::error_handler_t::replace) + "\n", "application/json");
}

// Runs a handler, turning what it throws into a JSON error.
template <class F>
httplib::Server::Handler guarded(F f) {
  return [f](const httplib::Request& req, httplib::Response& res) {
    try {
      f(req, res);
    } catch (const HttpError& e) {
      send_error(res, e.status, e.message);
    } catch (const BadRequest& e) {  // a spec, a body too deep, a number out of range
      send_error(res, 400, e.what());
    } catch (const StoreConflict& e) {
      send_error(res, 409, e.what());
    } catch (const sql::Error& e) {
      if (e.busy()) {
        res.set_header("Retry-After", "1");
        send_error(res, 503, std::string("the job store is locked by another process; try again (") + e.what() + ")");
      } else if (e.full()) {
        send_error(res, 507, std::string("the job store's disk is full; nothing was changed (") + e.what() + ")");
      } else {
        send_error(res, 500, std::string("the job store failed: ") + e.what());
      }
    } catch (const std::exception& e) {
      spdlog::error("{} {}: {}", req.method, req.path, e.what());
      send_error(res, 500, std::string("internal error: ") + e.what());
    }
  };
}

// The body, read here rather than by the library, which reads a chunked one
// whole however long it is: reading stops as soon as the decoded bytes pass
// the limit.
std::string read_body(const ApiContext& c, const httplib::ContentReader& reader) {
  std::string body;
  bool too_large = false;
  const bool whole = reader([&](const char* data, size_t n) {
    too_large = body.size() + n > c.max_body_bytes;
    if (!too_large) body.append(data, n);
    return !too_large;
  });
  if (too_large) throw HttpError{413, fmt::format("the request body is larger than {} bytes", c.max_body_bytes)};
  if (request_timed_out()) {
    throw HttpError{408, "the request body did not arrive within the request deadline (--request-timeout)"};
  }
  if (const std::string problem = request_framing_problem(); !problem.empty()) throw HttpError{400, problem};
  if (!whole) throw HttpError{400, "the request body could not be read (cut short, or its chunked framing is malformed)"};
  return body;
}

// A handler of a request that may have a body, guarded; it sees the body in
// req.body, as for the library's own reading.
template <class F>
httplib::Server::HandlerWithContentReader with_body(const ApiContext& c, F f) {
  return [&c, f](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    guarded([&](const httplib::Request& r, httplib::Response& out) {
      httplib::Request read = r;  // its matches still point into r.path, which outlives it
      read.body = read_body(c, reader);
      f(read, out);
    })(req, res);
  };
}

int64_t job_id(const httplib::Request& req) {
  try {
    return std::stoll(req.matches[1].str());
  } catch (const std::exception&) {
    throw HttpError{404, "no job " + req.matches[1].str()};
  }
}

JobRecord find_job(ApiContext& c, const httplib::Request& req) {
  const int64_t id = job_id(req);
  auto job = c.store.job(id);
  if (!job) throw HttpError{404, fmt::format("no job {}", id)};
  return *job;
}

// The body, once its type says JSON.
const std::string& json_body(const httplib::Request& req) {
  const std::string type = req.get_header_value("Content-Type");
  if (!is_json_media_type(type)) {
    throw HttpError{415, "the body must be application/json (got " + (type.empty() ? "no Content-Type" : type) + ")"};
  }
  return req.body;
}

json parse_body(const httplib::Request& req) { return parse_request_json(json_body(req)); }

int64_t int_param(const httplib::Request& req, const std::string& name, int64_t fallback, int64_t lo, int64_t hi) {
  if (!req.has_param(name.c_str())) return fallback;
  const std::string text = req.get_param_value(name.c_str());
  try {
    size_t used = 0;
    const int64_t v = std::stoll(text, &used);
    if (used == text.size() && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw HttpError{400, fmt::format("query parameter {} must be an integer from {} to {} (got '{}')", name, lo, hi, text)};
}

json detail_of(ApiContext& c, const JobRecord& job) {
  const auto report = c.reports.get(job.out_dir);
  return job_detail(job, report.get(), c.store.transitions(job.id), c.store.attempts(job.id));
}

// One more event stream of `client`, unless it holds c.max_event_streams_per_client.
bool take_client_stream(ApiContext& c, const std::string& client) {
  std::lock_guard lock(c.streams_mutex);
  int& held = c.streams_by_client[client];
  if (held >= c.max_event_streams_per_client) return false;
  ++held;
  return true;
}

// A stream refused for a cap: try later, and the connection ends, so that
// clients turned away hold no connection idle meanwhile.
void refuse_stream(httplib::Response& res) {
  res.set_header("Retry-After", "5");
  res.set_header("Connection", "close");
  end_connection_after_answer();
}

void give_back_client_stream(ApiContext& c, const std::string& client) {
  std::lock_guard lock(c.streams_mutex);
  if (--c.streams_by_client[client] <= 0) c.streams_by_client.erase(client);
}

// A stream's places under the two caps, given back when the last holder
// lets go: the answer (its stream never began), or the event pump.
class StreamPlaces {
 public:
  StreamPlaces(ApiContext& c, std::string client) : c_(c), client_(std::move(client)) {}
  ~StreamPlaces() {
    give_back_client_stream(c_, client_);
    c_.event_streams.fetch_sub(1);
  }
  StreamPlaces(const StreamPlaces&) = delete;
  StreamPlaces& operator=(const StreamPlaces&) = delete;

 private:
  ApiContext& c_;
  std::string client_;
};

// What an event stream's connection holds while the event pump has it.
struct StreamHold {
  std::shared_ptr<StreamPlaces> places;
  std::shared_ptr<void> connection_place;
};

// ---- handlers -------------------------------------------------------------

void submit(ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const json spec = check_job_spec(parse_job_spec(json_body(req)), c.rules);
  const std::string key = req.get_header_value("Idempotency-Key");
  if (key.size() > 200) throw HttpError{400, "Idempotency-Key is longer than 200 characters"};
  const auto submitted = c.store.submit(spec, key, [&](int64_t id) { return c.supervisor.job_dir(id); });
  if (submitted.created) {
    c.events.publish(submitted.job.id, "state", {{"state", records::JobState::Queued}, {"reason", "submitted"}});
    c.supervisor.wake();
  }
  res.set_header("Location", "/v1/jobs/" + std::to_string(submitted.job.id));
  send_json(res, submitted.created ? 201 : 200, detail_of(c, submitted.job));
}

void list(ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const std::string state = req.has_param("state") ? req.get_param_value("state") : "";
  const auto state_filter = records::job_state_from_string(state);
  if (!state.empty() && !state_filter) {
    std::string names;
    for (const auto s : records::kAllJobStates) names += (names.empty() ? "" : ", ") + std::string(records::to_string(s));
    throw HttpError{400, "query parameter state must be one of " + names + " (got '" + state + "')"};
  }
  const int64_t limit = int_param(req, "limit", 50, 1, 1000);
  const int64_t before = int_param(req, "before", 0, 0, std::numeric_limits<int64_t>::max());
  const auto jobs = c.store.jobs(state_filter, before, static_cast<int>(limit));
  json out = json::array();
  for (const auto& j : jobs) out.push_back(job_summary(j, c.reports.get(j.out_dir).get()));
  json body = {{"jobs", out}, {"next", nullptr}};
  if (static_cast<int64_t>(jobs.size()) == limit) {
    body["next"] = "/v1/jobs?limit=" + std::to_string(limit) + "&before=" + std::to_string(jobs.back().id) +
                   (state.empty() ? "" : "&state=" + state);
  }
  send_json(res, 200, body);
}

void cancel(ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const JobRecord job = find_job(c, req);
  if (records::is_final(job.state)) {
    const std::string state(records::to_string(job.state));
    throw HttpError{409, fmt::format("job {} has already {}; there is nothing to cancel", job.id,
                                     job.state == records::JobState::Succeeded ? state : "ended (" + state + ")")};
  }
  c.store.request_cancel(job.id);
  c.supervisor.wake();
  send_json(res, 202, detail_of(c, *c.store.job(job.id)));
}

void remove(ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const JobRecord job = find_job(c, req);
  if (!records::is_final(job.state)) {
    throw HttpError{409, fmt::format("job {} is {}; cancel it and delete it once it has ended", job.id,
                                     records::to_string(job.state))};
  }
  if (!c.store.remove(job.id)) throw HttpError{409, fmt::format("job {} could not be deleted", job.id)};
  c.reports.forget(job.out_dir);
  common::remove_tree(job.out_dir);
  std::error_code ec;
  fs::remove(job.out_dir + ".lock", ec);
  fs::remove(job.out_dir + ".log", ec);
  res.status = 204;
}

void job_plan(ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const JobRecord job = find_job(c, req);
  const auto report = c.reports.get(job.out_dir);
  if (!report || !report->plan.is_object()) {
    throw HttpError{404, fmt::format("job {} has no plan yet (it is {})", job.id, records::to_string(job.state))};
  }
  // The report's own parts, as report.json has them.
  const json whole = records::to_json(*report);
  send_json(res, 200, {{"plan", whole["plan"]}, {"chosen", whole["chosen"]}, {"predicted", whole["predicted"]},
                       {"replans", whole["replans"]}});
}

void job_metrics(ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const JobRecord job = find_job(c, req);
  const int64_t since = int_param(req, "since", -1, -1, std::numeric_limits<int64_t>::max());
  const int64_t limit = int_param(req, "limit", 5000, 1, 100000);
  const auto page = read_metrics_page(job.out_dir, since, static_cast<size_t>(limit));
  json rows = json::array();
  for (const auto& r : page.records) rows.push_back(records::to_json(r));
  json out = {{"records", std::move(rows)}, {"next", page.next}, {"more", page.more}};
  out["job"] = job.id;
  out["state"] = job.state;
  send_json(res, 200, out);
}

void job_events(ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const JobRecord job = find_job(c, req);
  if (c.event_streams.fetch_add(1) >= c.max_event_streams) {
    c.event_streams.fetch_sub(1);
    refuse_stream(res);
    throw HttpError{503, fmt::format("too many event streams open ({}); try again later", c.max_event_streams)};
  }
  if (!take_client_stream(c, req.remote_addr)) {
    c.event_streams.fetch_sub(1);
    refuse_stream(res);
    throw HttpError{503, fmt::format("{} has {} event streams open, its most; close one or try again later",
                                     req.remote_addr, c.max_event_streams_per_client)};
  }
  const std::string client = req.remote_addr;
  int64_t after = c.events.last_seq();
  if (req.has_header("Last-Event-ID")) {
    try {
      after = std::stoll(req.get_header_value("Last-Event-ID"));
    } catch (const std::exception&) {
    }
  }
  const int64_t id = job.id;
  auto places = std::make_shared<StreamPlaces>(c, client);
  // The answer's head and where the job is now (for a client that comes in
  // late) on this thread; the rest on the event pump's, which takes the
  // connection, so the stream holds no request thread.
  res.set_chunked_content_provider("text/event-stream", [&c, id, after, places](size_t, httplib::DataSink& sink) {
    const auto now = c.store.job(id);
    if (!now || c.stopping || c.event_pump == nullptr) return false;
    const std::string text = "event: state\ndata: " + json{{"state", now->state}, {"reason", now->reason}}.dump() + "\n\n";
    if (!sink.write(text.data(), text.size())) return false;
    hand_off_connection_after_answer([&c, id, after, places](common::Fd sock, std::shared_ptr<void> connection_place) {
      c.event_pump->add({std::move(sock), id, after,
                         std::make_shared<StreamHold>(StreamHold{places, std::move(connection_place)})});
    });
    return false;  // the library writes no more: the pump goes on from here
  });
}

void what_if_plan(const httplib::Request& req, httplib::Response& res) {
  try {
    send_json(res, 200, plan_what_if(parse_body(req)));
  } catch (const PlanRequestError& e) {
    throw HttpError{e.status, e.what()};
  }
}

std::string prometheus(ApiContext& c) {
  std::string o = c.metrics.prometheus();
  o += "# HELP tula_jobs Jobs in the store, by state.\n# TYPE tula_jobs gauge\n";
  for (const auto& [state, n] : c.store.counts_by_state()) {
    o += fmt::format("tula_jobs{{state=\"{}\"}} {}\n", records::to_string(state), n);
  }
  o += "# HELP tula_job_iteration_time_error Running jobs: measured over predicted seconds per step, minus 1.\n"
       "# TYPE tula_job_iteration_time_error gauge\n";
  std::string drift =
      "# HELP tula_job_time_prediction_drift Running jobs: latest predicted total time over the plan's, minus 1.\n"
      "# TYPE tula_job_time_prediction_drift gauge\n";
  for (const auto& job : c.store.jobs_in({records::JobState::Training})) {
    const auto report = c.reports.get(job.out_dir);
    if (!report || report->timeline.empty()) continue;
    const auto& last = report->timeline.back();
    // {:f}: the fixed six decimals these gauges have always been written with.
    if (last.iteration_s && last.iteration_s_predicted > 0) {
      o += fmt::format("tula_job_iteration_time_error{{job=\"{}\"}} {:f}\n", job.id,
                       *last.iteration_s / last.iteration_s_predicted - 1);
    }
    const double planned = report->predicted ? report->predicted->time_s : 0.0;
    if (planned > 0 && last.predicted_total_s > 0) {
      drift += fmt::format("tula_job_time_prediction_drift{{job=\"{}\"}} {:f}\n", job.id,
                           last.predicted_total_s / planned - 1);
    }
  }
  return o + drift;
}

}  // namespace

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(error_body(status, message), "application/json");
}

std::string route_of(const std::string& path) {
  static const std::regex job(R"(/v1/jobs/\d+)"), job_part(R"(/v1/jobs/\d+/(cancel|plan|metrics|events))"),
      page(R"(/jobs/\d+(/fragment|/report)?)");
  if (path == "/v1/jobs" || path == "/v1/plan" || path == "/healthz" || path == "/metrics" || path == "/") return path;
  std::smatch m;
  if (std::regex_match(path, job)) return "/v1/jobs/{id}";
  if (std::regex_match(path, m, job_part)) return "/v1/jobs/{id}/" + m[1].str();
  if (std::regex_match(path, m, page)) return "/jobs/{id}" + m[1].str();
  if (path.rfind("/static/", 0) == 0) return "/static/{file}";
  return "other";
}

void add_routes(httplib::Server& s, ApiContext& c) {
  s.Get("/healthz", guarded([&c](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"status", "ok"}, {"running", c.supervisor.running_count()}});
  }));
  s.Get("/metrics", guarded([&c](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus(c), "text/plain; version=0.0.4");
  }));
  // Every route that may take a body reads it itself (with_body): the
  // library would read a chunked one whole, however long.
  s.Post("/v1/jobs", with_body(c, [&c](const httplib::Request& req, httplib::Response& res) { submit(c, req, res); }));
  s.Get("/v1/jobs", guarded([&c](const httplib::Request& req, httplib::Response& res) { list(c, req, res); }));
  s.Get(R"(/v1/jobs/(\d+))", guarded([&c](const httplib::Request& req, httplib::Response& res) {
    send_json(res, 200, detail_of(c, find_job(c, req)));
  }));
  s.Delete(R"(/v1/jobs/(\d+))", with_body(c, [&c](const httplib::Request& req, httplib::Response& res) { remove(c, req, res); }));
  s.Post(R"(/v1/jobs/(\d+)/cancel)", with_body(c, [&c](const httplib::Request& req, httplib::Response& res) { cancel(c, req, res); }));
  s.Get(R"(/v1/jobs/(\d+)/plan)", guarded([&c](const httplib::Request& req, httplib::Response& res) { job_plan(c, req, res); }));
  s.Get(R"(/v1/jobs/(\d+)/metrics)", guarded([&c](const httplib::Request& req, httplib::Response& res) { job_metrics(c, req, res); }));
  s.Get(R"(/v1/jobs/(\d+)/events)", guarded([&c](const httplib::Request& req, httplib::Response& res) { job_events(c, req, res); }));
  s.Post("/v1/plan", with_body(c, [](const httplib::Request& req, httplib::Response& res) { what_if_plan(req, res); }));
  const auto no_route = with_body(c, [](const httplib::Request& req, httplib::Response&) {
    throw HttpError{404, "no such route: " + req.method + " " + req.path};
  });
  s.Post(".*", no_route).Put(".*", no_route).Patch(".*", no_route).Delete(".*", no_route);

  // The pages: shells and their script and style, the same for everyone and
  // with no data in them (public without the token); the data comes through
  // the API and the fragment below.
  s.Get("/", guarded([](const httplib::Request&, httplib::Response& res) {
    res.set_content(jobs_page(), "text/html; charset=utf-8");
  }));
  s.Get(R"(/jobs/(\d+))", guarded([](const httplib::Request& req, httplib::Response& res) {
    res.set_content(job_page(job_id(req)), "text/html; charset=utf-8");
  }));
  s.Get("/static/tula.js", guarded([](const httplib::Request&, httplib::Response& res) {
    res.set_content(page_script(), "text/javascript; charset=utf-8");
  }));
  s.Get("/static/tula.css", guarded([](const httplib::Request&, httplib::Response& res) {
    res.set_content(page_style(), "text/css; charset=utf-8");
  }));
  s.Get(R"(/jobs/(\d+)/fragment)", guarded([&c](const httplib::Request& req, httplib::Response& res) {
    const JobRecord job = find_job(c, req);
    const auto report = c.reports.get(job.out_dir);
    const auto metrics = read_metrics_page(job.out_dir, -1, 1000000).records;
    res.set_content(job_fragment(detail_of(c, job), report.get(), metrics), "text/html; charset=utf-8");
  }));
  s.Get(R"(/jobs/(\d+)/report)", guarded([&c](const httplib::Request& req, httplib::Response& res) {
    const JobRecord job = find_job(c, req);
    const auto report = c.reports.get(job.out_dir);
    if (!report) throw HttpError{404, fmt::format("job {} has no report yet", job.id)};
    res.set_content(tune::render_report_html(*report), "text/html; charset=utf-8");
  }));
}

}  // namespace tula::service
