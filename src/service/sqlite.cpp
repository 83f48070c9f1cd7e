#include "service/sqlite.hpp"

#include <sqlite3.h>

namespace tula::service::sql {
namespace {

[[noreturn]] void fail(sqlite3* db, int code, const std::string& what) {
  throw Error(code & 0xff, what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(code)));
}

}  // namespace

bool Error::busy() const { return code_ == SQLITE_BUSY || code_ == SQLITE_LOCKED; }
bool Error::full() const { return code_ == SQLITE_FULL; }

Statement::Statement(sqlite3* db, const std::string& sql) : db_(db) {
  const int rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) fail(db, rc, "preparing '" + sql.substr(0, 60) + "'");
}

Statement::Statement(sqlite3* db, sqlite3_stmt* kept, bool* in_use) : db_(db), stmt_(kept), in_use_(in_use) {
  *in_use_ = true;
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_), in_use_(other.in_use_) {
  other.stmt_ = nullptr;
  other.in_use_ = nullptr;
}

Statement::~Statement() {
  if (in_use_ == nullptr) {
    sqlite3_finalize(stmt_);
    return;
  }
  // Reset ends the statement's read, so a kept statement holds no lock.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  *in_use_ = false;
}

Statement& Statement::bind(int index, int64_t value) {
  if (const int rc = sqlite3_bind_int64(stmt_, index, value); rc != SQLITE_OK) fail(db_, rc, "binding");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (const int rc = sqlite3_bind_double(stmt_, index, value); rc != SQLITE_OK) fail(db_, rc, "binding");
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(db_, rc, "binding");
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (const int rc = sqlite3_bind_null(stmt_, index); rc != SQLITE_OK) fail(db_, rc, "binding");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string sql = sqlite3_sql(stmt_) ? sqlite3_sql(stmt_) : "";
  sqlite3_reset(stmt_);
  fail(db_, rc, "running '" + sql.substr(0, 60) + "'");
}

void Statement::run() {
  while (step()) {
  }
}

int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, column)) : std::string();
}
bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
std::optional<int64_t> Statement::optional_integer(int column) const {
  return is_null(column) ? std::nullopt : std::optional<int64_t>(integer(column));
}
std::optional<double> Statement::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional<double>(real(column));
}

Database::Database(const std::string& path) : path_(path) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(rc & 0xff, "cannot open the database " + path + ": " + message);
  }
  sqlite3_extended_result_codes(db_, 0);
}

Database::~Database() {
  for (auto& [sql, kept] : kept_) sqlite3_finalize(kept.stmt);
  sqlite3_close_v2(db_);
}

void Database::exec(const std::string& sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    const std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw Error(rc & 0xff, path_ + ": " + text);
  }
}

Statement Database::prepare(const std::string& sql) {
  if (const auto it = kept_.find(sql); it != kept_.end()) {
    if (it->second.in_use) return Statement(db_, sql);
    return Statement(db_, it->second.stmt, &it->second.in_use);
  }
  if (kept_.size() >= kMaxKeptStatements) return Statement(db_, sql);
  Kept kept;
  const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &kept.stmt,
                                    nullptr);
  if (rc != SQLITE_OK) fail(db_, rc, "preparing '" + sql.substr(0, 60) + "'");
  auto& placed = kept_.emplace(sql, kept).first->second;
  return Statement(db_, placed.stmt, &placed.in_use);
}
int64_t Database::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int Database::changes() const { return sqlite3_changes(db_); }

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (...) {
    // The transaction may already have been rolled back by SQLite (a full disk).
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace tula::service::sql
