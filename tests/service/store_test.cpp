// The job store on a real SQLite file: migrations, idempotent submits, the
// state machine's rules, cancelling and deleting.
#include "service/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "helpers/temp_dir.hpp"
#include "service/sqlite.hpp"

namespace tula::service {
namespace {

using nlohmann::json;
using records::AttemptEnd;
using records::JobState;
using testing::TempDir;

std::string dir_for(int64_t id) { return "/jobs/" + std::to_string(id); }

int64_t user_version(const std::string& path) {
  sql::Database db(path);
  auto st = db.prepare("PRAGMA user_version");
  st.step();
  return st.integer(0);
}

TEST(Store, ANewDatabaseIsAtTheCurrentSchemaInWalMode) {
  TempDir dir;
  const std::string path = (dir.path() / "jobs.db").string();
  { Store store(path); }
  EXPECT_EQ(user_version(path), Store::kSchemaVersion);
  sql::Database db(path);
  auto st = db.prepare("PRAGMA journal_mode");
  st.step();
  EXPECT_EQ(st.text(0), "wal");
}

TEST(Store, AVersionOneDatabaseIsMigratedWithItsJobsKept) {
  TempDir dir;
  const std::string path = (dir.path() / "jobs.db").string();
  {
    // The schema as version 1 wrote it, with one job in it.
    sql::Database db(path);
    db.exec(R"(CREATE TABLE jobs(id INTEGER PRIMARY KEY, state TEXT NOT NULL, spec TEXT NOT NULL, out_dir TEXT NOT NULL,
                 idempotency_key TEXT UNIQUE, created_at REAL NOT NULL, updated_at REAL NOT NULL, started_at REAL,
                 finished_at REAL, cancel_requested INTEGER NOT NULL DEFAULT 0, reason TEXT NOT NULL DEFAULT '');
               CREATE TABLE transitions(id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
                 from_state TEXT, to_state TEXT NOT NULL, at REAL NOT NULL, reason TEXT NOT NULL DEFAULT '');
               INSERT INTO jobs(state, spec, out_dir, created_at, updated_at) VALUES ('queued', '{"epochs": 1}', '/j/1', 1, 1);
               PRAGMA user_version = 1;)");
  }
  Store store(path);
  EXPECT_EQ(user_version(path), Store::kSchemaVersion);
  const auto job = store.job(1);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->spec, json({{"epochs", 1}}));
  EXPECT_EQ(job->attempts, 0);
  EXPECT_GT(store.begin_attempt(1, false), 0) << "the attempts table came with the migration";
}

TEST(Store, AVersionTwoDatabaseGetsEachAttemptsEndFromItsWords) {
  TempDir dir;
  const std::string path = (dir.path() / "jobs.db").string();
  {
    Store store(path);
    const int64_t id = store.submit({{"epochs", 1}}, "", dir_for).job.id;
    for (int i = 0; i < 6; ++i) store.begin_attempt(id, i > 0);
  }
  {
    // Back to version 2 as it wrote attempts: the words only.
    sql::Database db(path);
    db.exec(R"(ALTER TABLE attempts DROP COLUMN result;
               UPDATE attempts SET ended_at = 2, outcome = CASE id
                 WHEN 1 THEN 'stopped with the server (resumes at its next start)'
                 WHEN 2 THEN 'not started: its tune process was running already'
                 WHEN 3 THEN 'ended without a report (exit 137)'
                 WHEN 4 THEN 'stopped (exit 143)'
                 WHEN 5 THEN 'failed (exit 1)'
                 ELSE NULL END WHERE id < 6;
               PRAGMA user_version = 2;)");
  }
  Store store(path);
  const json attempts = store.attempts(1);
  ASSERT_EQ(attempts.size(), 6u);
  EXPECT_EQ(attempts[0]["result"], "stopped_with_server");
  EXPECT_EQ(attempts[1]["result"], "not_started");
  EXPECT_EQ(attempts[2]["result"], "ended_without_report");
  EXPECT_EQ(attempts[3]["result"], "stopped");
  EXPECT_EQ(attempts[4]["result"], "failed");
  EXPECT_TRUE(attempts[5]["result"].is_null()) << "still running";
  EXPECT_EQ(store.deaths(1), 2) << "the crash and the failure; not the clean stops";
}

TEST(Store, AnAttemptsEndIsKeptAsAValueAndInWords) {
  TempDir dir;
  Store store((dir.path() / "jobs.db").string());
  const int64_t id = store.submit({{"epochs", 1}}, "", dir_for).job.id;
  for (const auto end : records::kAllAttemptEnds) {
    store.end_attempt(store.begin_attempt(id, false), end, "words");
  }
  const json attempts = store.attempts(id);
  ASSERT_EQ(attempts.size(), std::size(records::kAllAttemptEnds));
  int64_t deaths = 0;
  for (size_t i = 0; i < attempts.size(); ++i) {
    EXPECT_EQ(attempts[i]["result"], records::to_string(records::kAllAttemptEnds[i]));
    EXPECT_EQ(attempts[i]["outcome"], "words");
    deaths += records::counts_as_death(records::kAllAttemptEnds[i]) ? 1 : 0;
  }
  EXPECT_EQ(store.deaths(id), deaths);
  EXPECT_EQ(deaths, 3) << "failed, ended without a report, could not start";
}

TEST(Store, ADatabaseFromANewerTulaIsRefusedSayingSo) {
  TempDir dir;
  const std::string path = (dir.path() / "jobs.db").string();
  { sql::Database(path).exec("PRAGMA user_version = 99"); }
  try {
    Store store(path);
    FAIL() << "opened a version-99 database";
  } catch (const StoreConflict& e) {
    EXPECT_NE(std::string(e.what()).find("version 99"), std::string::npos) << e.what();
  }
}

TEST(Store, AnIdempotencyKeyReturnsTheFirstJobAndRefusesAnotherRequest) {
  TempDir dir;
  Store store((dir.path() / "jobs.db").string());
  const json spec = {{"model", "small_cnn"}, {"epochs", 2}};
  const auto first = store.submit(spec, "key-1", dir_for);
  EXPECT_TRUE(first.created);
  EXPECT_EQ(first.job.out_dir, dir_for(first.job.id));
  const auto again = store.submit(spec, "key-1", dir_for);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.job.id, first.job.id);
  EXPECT_THROW(store.submit({{"model", "small_cnn"}, {"epochs", 3}}, "key-1", dir_for), StoreConflict);
  EXPECT_NE(store.submit(spec, "", dir_for).job.id, store.submit(spec, "", dir_for).job.id) << "no key: two jobs";
  EXPECT_EQ(store.jobs(std::nullopt, 0, 100).size(), 3u);
}

TEST(Store, StatesMoveForwardOnlyAndEveryMoveIsRecorded) {
  TempDir dir;
  Store store((dir.path() / "jobs.db").string());
  const int64_t id = store.submit({{"epochs", 1}}, "", dir_for).job.id;
  EXPECT_TRUE(store.transition(id, JobState::Profiling, "started"));
  EXPECT_FALSE(store.transition(id, JobState::Queued, "back")) << "never back";
  EXPECT_TRUE(store.transition(id, JobState::Training, "phase skipped: a profile was given"));
  EXPECT_TRUE(store.transition(id, JobState::Succeeded, "done"));
  EXPECT_FALSE(store.transition(id, JobState::Failed, "after the end")) << "final states stay";
  const auto job = store.job(id);
  EXPECT_EQ(job->state, JobState::Succeeded);
  EXPECT_TRUE(job->started_at && job->finished_at);
  const json t = store.transitions(id);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0]["to"], "queued");
  EXPECT_EQ(t[3]["from"], "training");
  EXPECT_EQ(t[3]["to"], "succeeded");
}

TEST(Store, CancelAndDeleteRespectTheJobsState) {
  TempDir dir;
  Store store((dir.path() / "jobs.db").string());
  const int64_t id = store.submit({{"epochs", 1}}, "", dir_for).job.id;
  EXPECT_FALSE(store.remove(id)) << "a queued job cannot be deleted";
  EXPECT_TRUE(store.request_cancel(id));
  EXPECT_TRUE(store.job(id)->cancel_requested);
  EXPECT_TRUE(store.transition(id, JobState::Cancelled, "by request"));
  EXPECT_FALSE(store.request_cancel(id)) << "nothing to cancel once it has ended";
  EXPECT_TRUE(store.remove(id));
  EXPECT_FALSE(store.job(id));
  EXPECT_TRUE(store.transitions(id).empty()) << "its history goes with it (foreign key cascade)";
}

TEST(Store, ListsPageNewestFirstAndFilterByState) {
  TempDir dir;
  Store store((dir.path() / "jobs.db").string());
  for (int i = 0; i < 5; ++i) store.submit({{"epochs", i + 1}}, "", dir_for);
  store.transition(2, JobState::Profiling, "started");
  const auto page1 = store.jobs(std::nullopt, 0, 2);
  ASSERT_EQ(page1.size(), 2u);
  EXPECT_EQ(page1[0].id, 5);
  const auto page2 = store.jobs(std::nullopt, page1.back().id, 2);
  EXPECT_EQ(page2[0].id, 3);
  EXPECT_EQ(store.jobs(JobState::Profiling, 0, 10).size(), 1u);
  EXPECT_EQ(store.counts_by_state()[JobState::Queued], 4);
}

TEST(Store, ALockedDatabaseIsABusyErrorAfterTheTimeout) {
  TempDir dir;
  const std::string path = (dir.path() / "jobs.db").string();
  Store store(path, 200);
  sql::Database other(path);
  other.exec("BEGIN EXCLUSIVE");
  try {
    store.submit({{"epochs", 1}}, "", dir_for);
    FAIL() << "wrote through an exclusive lock";
  } catch (const sql::Error& e) {
    EXPECT_TRUE(e.busy()) << e.what();
  }
  other.exec("ROLLBACK");
  EXPECT_TRUE(store.submit({{"epochs", 1}}, "", dir_for).created) << "works again once the lock is gone";
}

}  // namespace
}  // namespace tula::service
