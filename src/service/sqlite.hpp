// A thin RAII layer over SQLite's C API: a connection, prepared statements
// with typed binds and columns, and errors that keep SQLite's code so callers
// can tell "the database is locked" and "the disk is full" from the rest.
// No LibTorch here.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace tula::service::sql {

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // SQLite's primary result code
  bool busy() const;                   // locked by another connection past the busy timeout
  bool full() const;                   // the disk (or the quota) is full
 private:
  int code_;
};

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql);
  // A statement the database keeps prepared: this one borrows it, and gives
  // it back reset, its binds cleared, at the end of its life.
  Statement(sqlite3* db, sqlite3_stmt* kept, bool* in_use);
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds are 1-based, as in SQL's ?1, ?2, ...
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind_null(int index);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }

  // Advances to the next row; false when there is none (the statement is done).
  bool step();
  // Runs a statement that returns no rows.
  void run();

  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  bool is_null(int column) const;
  std::optional<int64_t> optional_integer(int column) const;
  std::optional<double> optional_real(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  bool* in_use_ = nullptr;  // the kept statement's mark; null when this one owns stmt_
};

class Database {
 public:
  // Opens (creating) the file; throws Error naming the path.
  explicit Database(const std::string& path);
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  void exec(const std::string& sql);  // one or more statements, no rows
  // A statement for `sql`, parsed once and kept for the next call with the
  // same text (the store's statements are a fixed few, asked on every
  // request). Used by one thread at a time, as the connection is (the
  // store's mutex); a text whose kept statement is still in use, or past
  // kMaxKeptStatements, gets a statement of its own.
  Statement prepare(const std::string& sql);
  int64_t last_insert_id() const;
  int changes() const;  // rows changed by the last statement

 private:
  static constexpr size_t kMaxKeptStatements = 64;
  struct Kept {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;  // the map's nodes stay put, so a borrower may hold its address
  };

  sqlite3* db_ = nullptr;
  std::string path_;
  std::unordered_map<std::string, Kept> kept_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back unless commit() ran.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace tula::service::sql
