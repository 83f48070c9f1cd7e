// `tula serve` across its own restarts: a server killed mid-training readopts
// its job, a stopped one resumes its jobs, and such stops do not use up a
// job's resumes; a cancelled job keeps its checkpoint.
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

TEST(Serve, AServerKilledMidTrainingReadoptsTheJobItLeftRunning) {
  TempDir dir;
  json job = kJob;
  job["synthetic_size"] = 2048;
  job["epochs"] = 4;
  int64_t id = 0;
  pid_t tune = 0;
  {
    Server server(dir);
    id = submit(server, job);
    ASSERT_TRUE(reaches(server, id, "training"));
    const json attempts = get(server, "/v1/jobs/" + std::to_string(id))["attempts"];
    tune = attempts[0]["pid"].get<pid_t>();
    server.process().send(SIGKILL);
    server.process().wait();
  }
  EXPECT_EQ(::kill(tune, 0), 0) << "the tune process outlives the server";
  Server again(dir);
  ASSERT_TRUE(reaches(again, id, "succeeded")) << get(again, "/v1/jobs/" + std::to_string(id)).dump(2);
  const json attempts = get(again, "/v1/jobs/" + std::to_string(id))["attempts"];
  EXPECT_EQ(attempts.size(), 1u) << "re-adopted, not started again: " << attempts.dump();
  EXPECT_EQ(attempts[0]["pid"].get<pid_t>(), tune);
  again.process().send(SIGTERM);
  EXPECT_EQ(again.process().wait(), 0);
}

TEST(Serve, ACancelledJobStopsWithItsCheckpointAndAStoppedServerResumesItsJobs) {
  TempDir dir;
  json job = kJob;
  job["synthetic_size"] = 2048;
  job["epochs"] = 6;
  Server server(dir, {"--max-running", "1"});
  const int64_t first = submit(server, job), second = submit(server, job);
  ASSERT_TRUE(reaches(server, first, "training"));
  EXPECT_EQ(get(server, "/v1/jobs/" + std::to_string(second))["state"], "queued") << "one at a time";
  auto cancel = server.client().Post("/v1/jobs/" + std::to_string(first) + "/cancel");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 202);
  ASSERT_TRUE(reaches(server, first, "cancelled"));
  ASSERT_TRUE(reaches(server, second, "training"));
  // SIGTERM: the server asks the running job to checkpoint, and the next server resumes it.
  server.process().send(SIGTERM);
  EXPECT_EQ(server.process().wait(180s), 0);
  EXPECT_FALSE(tula::service::lock_holder((dir.path() / "work" / "jobs" / (std::to_string(second) + ".lock")).string()))
      << "no process of the job is left running";
  Server again(dir);
  ASSERT_TRUE(reaches(again, second, "succeeded"));
  const json attempts = get(again, "/v1/jobs/" + std::to_string(second))["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_TRUE(attempts[1]["resumed"].get<bool>());
  again.process().send(SIGTERM);
  EXPECT_EQ(again.process().wait(), 0);
}

// Checkpointed stops with the server are not deaths: with no resume after a
// death allowed, a job stopped twice still finishes.
TEST(Serve, StopsWithTheServerDoNotCountAgainstAJobsResumes) {
  TempDir dir;
  json job = kJob;
  job["synthetic_size"] = 2048;
  job["epochs"] = 6;
  job["start_at"] = "2x64";
  job["no_replan"] = true;
  int64_t id = 0;
  int64_t steps_seen = 0;
  for (int stop = 0; stop < 2; ++stop) {
    Server server(dir, {"--max-resumes", "0"});
    if (stop == 0) id = submit(server, job);
    const std::string path = "/v1/jobs/" + std::to_string(id);
    // Stopped each time once it made steps since the last stop.
    ASSERT_TRUE(eventually([&] {
      const json m = get(server, path + "/metrics?since=" + std::to_string(steps_seen));
      return m.contains("records") && !m["records"].empty();
    }, "job " + std::to_string(id) + " to train past step " + std::to_string(steps_seen), 240s));
    steps_seen = get(server, path + "/metrics?since=" + std::to_string(steps_seen))["records"].back()["step"];
    server.process().send(SIGTERM);
    ASSERT_EQ(server.process().wait(180s), 0);
  }
  Server last(dir, {"--max-resumes", "0"});
  ASSERT_TRUE(reaches(last, id, "succeeded")) << get(last, "/v1/jobs/" + std::to_string(id)).dump(2);
  EXPECT_EQ(get(last, "/v1/jobs/" + std::to_string(id))["attempts"].size(), 3u);
  last.process().send(SIGTERM);
  EXPECT_EQ(last.process().wait(), 0);
}

// A server and its job that went down as the job finished: tune.json says
// done, report.json still says running (the last periodic save), and the
// store still says training. The next server resumes the job, which makes its
// final report from its own records: the results the job had, not emptied
// ones (best and final accuracy null, epochs and steps 0 before the fix).
TEST(Serve, AJobThatFinishedAsTheServerWentDownKeepsItsResults) {
  TempDir dir;
  int64_t id = 0;
  {
    Server server(dir);
    id = submit(server, kJob);
    ASSERT_TRUE(reaches(server, id, "succeeded")) << server.logs_of(id);
    server.process().send(SIGTERM);
    ASSERT_EQ(server.process().wait(), 0);
  }
  const fs::path report_path = dir.path() / "work" / "jobs" / std::to_string(id) / "report.json";
  const json finished = json::parse(read_text(report_path));
  json cut = finished;
  cut["state"] = "running";
  cut.erase("exit_code");
  cut.erase("reason");
  std::ofstream(report_path) << cut.dump(2);
  {
    tula::service::sql::Database db((dir.path() / "jobs.db").string());
    db.exec("UPDATE jobs SET state = 'training' WHERE id = " + std::to_string(id));
  }
  Server again(dir);
  // The phase already says done, so the job shows succeeded at once; the
  // resumed attempt's end is what the report waits on.
  const std::string path = "/v1/jobs/" + std::to_string(id);
  ASSERT_TRUE(eventually([&] {
    const json attempts = get(again, path)["attempts"];
    return attempts.size() == 2 && !attempts[1]["ended_at"].is_null();
  }, "job " + std::to_string(id) + "'s resumed attempt to end", 240s)) << again.logs_of(id);
  EXPECT_EQ(get(again, path)["state"], "succeeded");
  const json attempts = get(again, path)["attempts"];
  EXPECT_TRUE(attempts[1]["resumed"].get<bool>());
  EXPECT_EQ(attempts[1]["outcome"].get<std::string>().rfind("succeeded", 0), 0u) << attempts.dump();
  const json report = json::parse(read_text(report_path));
  EXPECT_EQ(report["state"], "succeeded");
  for (const char* key : {"best_accuracy", "final_accuracy", "epochs", "steps"}) {
    EXPECT_EQ(report["measured"][key], finished["measured"][key]) << key << " in " << report["measured"].dump();
  }
  again.process().send(SIGTERM);
  EXPECT_EQ(again.process().wait(), 0);
}

}  // namespace
}  // namespace tula::testing
