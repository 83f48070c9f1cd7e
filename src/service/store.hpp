// The service's durable record: jobs, every state change, every start of a
// job's tune process. SQLite in WAL mode with foreign keys; the schema carries
// a version (PRAGMA user_version) and is brought up to date by ordered
// migrations when opened. Every state change is committed before the caller
// acts on it, so a server killed at any moment restarts from what it did.
// Thread-safe: one connection behind a mutex. No LibTorch here.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/states.hpp"
#include "service/sqlite.hpp"

namespace tula::service {

struct JobRecord {
  int64_t id = 0;
  records::JobState state = records::JobState::Queued;
  nlohmann::json spec;          // the submitted job, as validated
  std::string out_dir;          // the tune job's directory
  std::string idempotency_key;  // empty: none given
  double created_at = 0, updated_at = 0;
  std::optional<double> started_at, finished_at;
  bool cancel_requested = false;
  int64_t attempts = 0;  // starts of the job's tune process (resumes included)
  std::string reason;    // why it ended (or the latest word on it)
};

// A schema newer than this program knows, or an idempotency key reused for
// another request.
class StoreConflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  static constexpr int kSchemaVersion = 3;

  // Opens or creates the database and migrates it; throws sql::Error when it
  // cannot, StoreConflict when the file is from a newer version.
  explicit Store(const std::string& path, int busy_timeout_ms = 5000);

  struct Submitted {
    JobRecord job;
    bool created = false;  // false: the idempotency key named an earlier job
  };
  // Adds a queued job. `out_dir_for(id)` names its directory. With a key seen
  // before, returns that job if the spec is the same, else StoreConflict.
  Submitted submit(const nlohmann::json& spec, const std::string& idempotency_key,
                   const std::function<std::string(int64_t)>& out_dir_for);

  std::optional<JobRecord> job(int64_t id);
  // Newest first; `before` is the paging cursor (ids below it), 0 for the first page.
  // `state` nullopt: every state.
  std::vector<JobRecord> jobs(std::optional<records::JobState> state, int64_t before, int limit);
  std::vector<JobRecord> jobs_in(const std::vector<records::JobState>& states);  // oldest first
  std::map<records::JobState, int64_t> counts_by_state();

  // Moves the job and records the change, in one transaction; false when
  // the move is not allowed from the state it is in now (records::can_move).
  bool transition(int64_t id, records::JobState to, const std::string& reason);
  // Marks a start of the job's tune process (attempts + 1, an attempts row).
  int64_t begin_attempt(int64_t id, bool resumed);
  // How it ended, as a value and in words.
  void end_attempt(int64_t attempt_id, records::AttemptEnd end, const std::string& outcome);
  // The job's attempts that died (records::counts_as_death).
  int64_t deaths(int64_t id);
  void set_attempt_pid(int64_t attempt_id, int64_t pid);
  std::optional<int64_t> latest_attempt(int64_t id);  // its id, if the job ever started
  // Records that the job is to be cancelled; false when it is final already.
  bool request_cancel(int64_t id);
  void set_reason(int64_t id, const std::string& reason);
  // Deletes a final job and its history; false when it is not final.
  bool remove(int64_t id);

  nlohmann::json transitions(int64_t id);
  nlohmann::json attempts(int64_t id);

 private:
  void migrate();
  JobRecord read_job(sql::Statement& st) const;

  std::mutex mutex_;
  sql::Database db_;
};


}  // namespace tula::service
