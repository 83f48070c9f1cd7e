// `tula serve` when its store is locked: a job that ends meanwhile settles
// once the lock is gone.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers/child_process.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"
#include "service/end_to_end/serve_fixture.hpp"
#include "service/sqlite.hpp"
#include "service/tune_process.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// The store locked (another process's write transaction) while a job's tune
// process ends: the job still settles once the lock is gone, without a restart.
TEST(Serve, AJobThatEndsWhileTheStoreIsLockedSettlesOnceItIsFree) {
  TempDir dir;
  Server server(dir);
  const int64_t id = submit(server, kJob);
  ASSERT_TRUE(reaches(server, id, "training"));
  const std::string lock = (dir.path() / "work" / "jobs" / (std::to_string(id) + ".lock")).string();
  {
    tula::service::sql::Database db((dir.path() / "jobs.db").string());
    db.exec("BEGIN EXCLUSIVE");
    ASSERT_TRUE(eventually([&] { return !tula::service::lock_holder(lock); }, "job's tune process to end", 240s));
    ASSERT_TRUE(eventually([&] { return server.process().output().find("database is locked") != std::string::npos; },
                           "the server to meet the locked store", 120s))
        << server.process().output();
    db.exec("COMMIT");
  }
  ASSERT_TRUE(reaches(server, id, "succeeded", 120s)) << get(server, "/v1/jobs/" + std::to_string(id)).dump(2);
  server.process().send(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0);
}

}  // namespace
}  // namespace tula::testing
