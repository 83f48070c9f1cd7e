// What the end-to-end tests of `tula serve` share: a real server on a free
// port over its own database and work folder, the test job (small_cnn on a
// small synthetic set, two epochs), and the API calls they make.
#pragma once
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/child_process.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"
#include "records/states.hpp"

namespace tula::testing {

namespace serve_fixture_detail {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// At most the last `n` lines of `text`.
inline std::string last_lines(const std::string& text, size_t n) {
  size_t from = text.size();
  for (size_t seen = 0; from > 0; --from) {
    if (text[from - 1] == '\n' && ++seen > n) break;
  }
  return text.substr(from);
}

// A server on a free port over dir/jobs.db and dir/work.
class Server {
 public:
  Server(const TempDir& dir, const std::vector<std::string>& extra = {}) : dir_(dir.path()) {
    const fs::path ready = dir_ / "ready.json";
    fs::remove(ready);
    std::vector<std::string> argv = {tula_binary(), "serve", "--listen", "127.0.0.1:0", "--db", (dir_ / "jobs.db").string(),
                                     "--workdir", (dir_ / "work").string(), "--ready-file", ready.string(), "--poll", "0.2"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv, (dir_ / ("server-" + std::to_string(++starts_) + ".log")).string());
    const bool up = eventually([&] { return fs::exists(ready) || process_->ended(); }, "the server's ready file");
    EXPECT_TRUE(up && fs::exists(ready)) << process_->output();
    if (fs::exists(ready)) port_ = json::parse(read_text(ready))["port"].get<int>();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30);
    return c;
  }
  ChildProcess& process() { return *process_; }
  int port() const { return port_; }
  // The last lines of this server's log and of job `id`'s tune log, for a failure message.
  std::string logs_of(int64_t id) const {
    return "\nthe server's log ends:\n" + last_lines(process_->output(), 20) + "\njob " + std::to_string(id) +
           "'s log ends:\n" + last_lines(read_text(dir_ / "work" / "jobs" / (std::to_string(id) + ".log")), 20);
  }

 private:
  fs::path dir_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
  static inline int starts_ = 0;
};

inline const json kJob = {{"model", "small_cnn"}, {"dataset", "synthetic"}, {"synthetic_size", 512}, {"epochs", 2},
                   {"pilot_steps", 6},     {"watch_every", 4}};

inline json get(const Server& s, const std::string& path) {
  auto r = s.client().Get(path);
  if (!r) return json{{"error", "no answer"}};
  return json::parse(r->body, nullptr, false);
}

inline int64_t submit(const Server& s, const json& job, int expected = 201) {
  auto r = s.client().Post("/v1/jobs", job.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return -1;
  EXPECT_EQ(r->status, expected) << r->body;
  return json::parse(r->body).value("id", int64_t{-1});
}

// Waits for job `id` to be in `state`. A job that ends in another state fails
// the wait at once; either failure says where the job was and why.
inline ::testing::AssertionResult reaches(const Server& s, int64_t id, const std::string& state, std::chrono::seconds patience = 240s) {
  const std::string path = "/v1/jobs/" + std::to_string(id);
  json job;
  bool ended_elsewhere = false;
  auto result = eventually(
      [&] {
        job = get(s, path);
        const std::string now = job.value("state", "");
        const auto parsed = records::job_state_from_string(now);
        ended_elsewhere = now != state && parsed && records::is_final(*parsed);
        return now == state || ended_elsewhere;
      },
      "job " + std::to_string(id) + " to be " + state, patience);
  if (result && ended_elsewhere) {
    result = ::testing::AssertionFailure() << "job " << id << " ended " << job.value("state", "") << ", not " << state;
  }
  if (!result) result << "; the job: " << job.dump(2) << s.logs_of(id);
  return result;
}

}  // namespace serve_fixture_detail

using serve_fixture_detail::get;
using serve_fixture_detail::kJob;
using serve_fixture_detail::reaches;
using serve_fixture_detail::Server;
using serve_fixture_detail::submit;

}  // namespace tula::testing
