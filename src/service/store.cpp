#include "service/store.hpp"

#include <fmt/format.h>

#include "common/text.hpp"
#include "records/states.hpp"

namespace tula::service {

using common::unix_now;
using nlohmann::json;

namespace {

// Migration i brings the schema from version i to i + 1. Append only: a
// database already at version k runs the migrations from k on.
const char* const kMigrations[] = {
    // 0 -> 1: jobs and their state changes.
    R"(CREATE TABLE jobs(
         id INTEGER PRIMARY KEY,
         state TEXT NOT NULL CHECK (state IN ('queued','profiling','planning','training','succeeded','failed','cancelled')),
         spec TEXT NOT NULL,
         out_dir TEXT NOT NULL,
         idempotency_key TEXT UNIQUE,
         created_at REAL NOT NULL,
         updated_at REAL NOT NULL,
         started_at REAL,
         finished_at REAL,
         cancel_requested INTEGER NOT NULL DEFAULT 0,
         reason TEXT NOT NULL DEFAULT '');
       CREATE INDEX jobs_by_state ON jobs(state, id);
       CREATE TABLE transitions(
         id INTEGER PRIMARY KEY,
         job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
         from_state TEXT,
         to_state TEXT NOT NULL,
         at REAL NOT NULL,
         reason TEXT NOT NULL DEFAULT '');
       CREATE INDEX transitions_by_job ON transitions(job_id, id);)",
    // 1 -> 2: each start of a job's tune process, so that a restart can tell
    // a resume from a second run.
    R"(ALTER TABLE jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
       CREATE TABLE attempts(
         id INTEGER PRIMARY KEY,
         job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
         started_at REAL NOT NULL,
         resumed INTEGER NOT NULL,
         pid INTEGER,
         ended_at REAL,
         outcome TEXT);
       CREATE INDEX attempts_by_job ON attempts(job_id, id);)",
    // 2 -> 3: how each attempt ended as a value (records::AttemptEnd), beside
    // the words; earlier rows get it from the words they were written with.
    R"(ALTER TABLE attempts ADD COLUMN result TEXT;
       UPDATE attempts SET result = CASE
         WHEN outcome IS NULL THEN NULL
         WHEN outcome LIKE 'succeeded%' THEN 'succeeded'
         WHEN outcome LIKE 'stopped with the server%' THEN 'stopped_with_server'
         WHEN outcome LIKE 'stopped%' THEN 'stopped'
         WHEN outcome LIKE 'failed%' THEN 'failed'
         WHEN outcome LIKE 'not started%' THEN 'not_started'
         WHEN outcome LIKE 'could not start%' THEN 'could_not_start'
         ELSE 'ended_without_report' END;)",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == Store::kSchemaVersion);

// The final states as an SQL list, from the one table of states.
std::string final_states_sql() {
  std::string out;
  for (const auto s : records::kAllJobStates) {
    if (!records::is_final(s)) continue;
    out += (out.empty() ? "('" : ",'") + std::string(records::to_string(s)) + "'";
  }
  return out + ")";
}

std::string text(records::JobState s) { return std::string(records::to_string(s)); }

constexpr const char* kJobColumns =
    "id, state, spec, out_dir, COALESCE(idempotency_key, ''), created_at, updated_at, started_at, finished_at, "
    "cancel_requested, attempts, reason";

// "SELECT <every job column> FROM jobs WHERE <where>": callers keep it in a
// static, so a request builds no text (the database keeps the parsed statement).
std::string jobs_where(const char* where) { return std::string("SELECT ") + kJobColumns + " FROM jobs WHERE " + where; }

const std::string& job_by_id_sql() {
  static const std::string sql = jobs_where("id = ?1");
  return sql;
}

}  // namespace

Store::Store(const std::string& path, int busy_timeout_ms) : db_(path) {
  db_.exec("PRAGMA busy_timeout = " + std::to_string(busy_timeout_ms));
  db_.exec("PRAGMA journal_mode = WAL");
  db_.exec("PRAGMA synchronous = FULL");  // a committed change survives a power cut, not only a crash
  db_.exec("PRAGMA foreign_keys = ON");
  migrate();
}

void Store::migrate() {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  auto st = db_.prepare("PRAGMA user_version");
  st.step();
  const int64_t version = st.integer(0);
  if (version > kSchemaVersion) {
    throw StoreConflict(fmt::format(
        "the database's schema is version {}, newer than this tula's ({}); use the tula that wrote it", version,
        kSchemaVersion));
  }
  for (int64_t v = version; v < kSchemaVersion; ++v) db_.exec(kMigrations[v]);
  db_.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  tx.commit();
}

JobRecord Store::read_job(sql::Statement& st) const {
  JobRecord j;
  j.id = st.integer(0);
  const std::string state = st.text(1);
  const auto parsed = records::job_state_from_string(state);
  if (!parsed) throw StoreConflict(fmt::format("job {} has an unknown state '{}'", j.id, state));
  j.state = *parsed;
  j.spec = json::parse(st.text(2));
  j.out_dir = st.text(3);
  j.idempotency_key = st.text(4);
  j.created_at = st.real(5);
  j.updated_at = st.real(6);
  j.started_at = st.optional_real(7);
  j.finished_at = st.optional_real(8);
  j.cancel_requested = st.integer(9) != 0;
  j.attempts = st.integer(10);
  j.reason = st.text(11);
  return j;
}

Store::Submitted Store::submit(const json& spec, const std::string& idempotency_key,
                               const std::function<std::string(int64_t)>& out_dir_for) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  if (!idempotency_key.empty()) {
    static const std::string by_key = jobs_where("idempotency_key = ?1");
    auto st = db_.prepare(by_key);
    st.bind(1, idempotency_key);
    if (st.step()) {
      JobRecord earlier = read_job(st);
      if (earlier.spec != spec) {
        throw StoreConflict(fmt::format("Idempotency-Key '{}' was used for job {} with a different request",
                                        idempotency_key, earlier.id));
      }
      return {earlier, false};
    }
  }
  const double now = unix_now();
  auto insert = db_.prepare(
      "INSERT INTO jobs(state, spec, out_dir, idempotency_key, created_at, updated_at) "
      "VALUES ('queued', ?1, '', ?2, ?3, ?3)");
  insert.bind(1, spec.dump()).bind(3, now);
  if (idempotency_key.empty()) {
    insert.bind_null(2);
  } else {
    insert.bind(2, idempotency_key);
  }
  insert.run();
  const int64_t id = db_.last_insert_id();
  db_.prepare("UPDATE jobs SET out_dir = ?1 WHERE id = ?2").bind(1, out_dir_for(id)).bind(2, id).run();
  db_.prepare("INSERT INTO transitions(job_id, from_state, to_state, at, reason) VALUES (?1, NULL, 'queued', ?2, 'submitted')")
      .bind(1, id)
      .bind(2, now)
      .run();
  auto st = db_.prepare(job_by_id_sql());
  st.bind(1, id);
  st.step();
  JobRecord created = read_job(st);
  tx.commit();
  return {created, true};
}

std::optional<JobRecord> Store::job(int64_t id) {
  std::lock_guard lock(mutex_);
  auto st = db_.prepare(job_by_id_sql());
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_job(st);
}

std::vector<JobRecord> Store::jobs(std::optional<records::JobState> state, int64_t before, int limit) {
  std::lock_guard lock(mutex_);
  static const std::string page = jobs_where("(?1 = '' OR state = ?1) AND (?2 = 0 OR id < ?2) ORDER BY id DESC LIMIT ?3");
  auto st = db_.prepare(page);
  st.bind(1, state ? text(*state) : std::string()).bind(2, before).bind(3, static_cast<int64_t>(limit));
  std::vector<JobRecord> out;
  while (st.step()) out.push_back(read_job(st));
  return out;
}

std::vector<JobRecord> Store::jobs_in(const std::vector<records::JobState>& states) {
  std::lock_guard lock(mutex_);
  std::vector<JobRecord> out;
  static const std::string in_states = jobs_where("state IN (SELECT value FROM json_each(?1)) ORDER BY id");
  auto st = db_.prepare(in_states);
  json names = json::array();
  for (const auto s : states) names.push_back(text(s));
  st.bind(1, names.dump());
  while (st.step()) out.push_back(read_job(st));
  return out;
}

std::map<records::JobState, int64_t> Store::counts_by_state() {
  std::lock_guard lock(mutex_);
  std::map<records::JobState, int64_t> out;
  for (const auto s : records::kAllJobStates) out[s] = 0;
  auto st = db_.prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state");
  while (st.step()) {
    if (const auto s = records::job_state_from_string(st.text(0))) out[*s] = st.integer(1);
  }
  return out;
}

bool Store::transition(int64_t id, records::JobState to, const std::string& reason) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  auto st = db_.prepare("SELECT state FROM jobs WHERE id = ?1");
  st.bind(1, id);
  if (!st.step()) return false;
  const std::string from = st.text(0);
  const auto from_state = records::job_state_from_string(from);
  if (!from_state || !records::can_move(*from_state, to)) return false;
  const double now = unix_now();
  db_.prepare(
         "UPDATE jobs SET state = ?1, updated_at = ?2, reason = ?3, "
         "started_at = CASE WHEN started_at IS NULL AND ?1 <> 'queued' AND ?4 = 0 THEN ?2 ELSE started_at END, "
         "finished_at = CASE WHEN ?4 = 1 THEN ?2 ELSE finished_at END WHERE id = ?5")
      .bind(1, text(to))
      .bind(2, now)
      .bind(3, reason)
      .bind(4, static_cast<int64_t>(records::is_final(to)))
      .bind(5, id)
      .run();
  db_.prepare("INSERT INTO transitions(job_id, from_state, to_state, at, reason) VALUES (?1, ?2, ?3, ?4, ?5)")
      .bind(1, id)
      .bind(2, from)
      .bind(3, text(to))
      .bind(4, now)
      .bind(5, reason)
      .run();
  tx.commit();
  return true;
}

int64_t Store::begin_attempt(int64_t id, bool resumed) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  db_.prepare("UPDATE jobs SET attempts = attempts + 1, updated_at = ?2 WHERE id = ?1").bind(1, id).bind(2, unix_now()).run();
  db_.prepare("INSERT INTO attempts(job_id, started_at, resumed) VALUES (?1, ?2, ?3)")
      .bind(1, id)
      .bind(2, unix_now())
      .bind(3, static_cast<int64_t>(resumed))
      .run();
  const int64_t attempt = db_.last_insert_id();
  tx.commit();
  return attempt;
}

void Store::end_attempt(int64_t attempt_id, records::AttemptEnd end, const std::string& outcome) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE attempts SET ended_at = ?2, outcome = ?3, result = ?4 WHERE id = ?1 AND ended_at IS NULL")
      .bind(1, attempt_id)
      .bind(2, unix_now())
      .bind(3, outcome)
      .bind(4, std::string(records::to_string(end)))
      .run();
}

int64_t Store::deaths(int64_t id) {
  std::lock_guard lock(mutex_);
  auto st = db_.prepare("SELECT result FROM attempts WHERE job_id = ?1 AND result IS NOT NULL");
  st.bind(1, id);
  int64_t n = 0;
  while (st.step()) {
    const auto end = records::attempt_end_from_string(st.text(0));
    if (end && records::counts_as_death(*end)) ++n;
  }
  return n;
}

void Store::set_attempt_pid(int64_t attempt_id, int64_t pid) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE attempts SET pid = ?2 WHERE id = ?1").bind(1, attempt_id).bind(2, pid).run();
}

std::optional<int64_t> Store::latest_attempt(int64_t id) {
  std::lock_guard lock(mutex_);
  auto st = db_.prepare("SELECT MAX(id) FROM attempts WHERE job_id = ?1");
  st.bind(1, id);
  st.step();
  return st.optional_integer(0);
}

bool Store::request_cancel(int64_t id) {
  std::lock_guard lock(mutex_);
  static const std::string sql =
      "UPDATE jobs SET cancel_requested = 1, updated_at = ?2 WHERE id = ?1 AND state NOT IN " + final_states_sql();
  db_.prepare(sql)
      .bind(1, id)
      .bind(2, unix_now())
      .run();
  return db_.changes() > 0;
}

void Store::set_reason(int64_t id, const std::string& reason) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE jobs SET reason = ?2, updated_at = ?3 WHERE id = ?1").bind(1, id).bind(2, reason).bind(3, unix_now()).run();
}

bool Store::remove(int64_t id) {
  std::lock_guard lock(mutex_);
  static const std::string sql = "DELETE FROM jobs WHERE id = ?1 AND state IN " + final_states_sql();
  db_.prepare(sql).bind(1, id).run();
  return db_.changes() > 0;
}

json Store::transitions(int64_t id) {
  std::lock_guard lock(mutex_);
  json out = json::array();
  auto st = db_.prepare("SELECT from_state, to_state, at, reason FROM transitions WHERE job_id = ?1 ORDER BY id");
  st.bind(1, id);
  while (st.step()) {
    out.push_back({{"from", st.is_null(0) ? json(nullptr) : json(st.text(0))},
                   {"to", st.text(1)},
                   {"at", st.real(2)},
                   {"reason", st.text(3)}});
  }
  return out;
}

json Store::attempts(int64_t id) {
  std::lock_guard lock(mutex_);
  json out = json::array();
  auto st = db_.prepare(
      "SELECT started_at, resumed, pid, ended_at, outcome, result FROM attempts WHERE job_id = ?1 ORDER BY id");
  st.bind(1, id);
  while (st.step()) {
    out.push_back({{"started_at", st.real(0)},
                   {"resumed", st.integer(1) != 0},
                   {"pid", st.is_null(2) ? json(nullptr) : json(st.integer(2))},
                   {"ended_at", st.is_null(3) ? json(nullptr) : json(st.real(3))},
                   {"outcome", st.is_null(4) ? json(nullptr) : json(st.text(4))},
                   {"result", st.is_null(5) ? json(nullptr) : json(st.text(5))}});
  }
  return out;
}

}  // namespace tula::service
