// A job's paths are resolved again just before its tune process starts: a
// symlink under a data root that dangled at the submit and leads outside by
// the start fails the job, naming the path, and no process starts to read it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"
#include "records/states.hpp"
#include "service/job_spec.hpp"
#include "service/supervisor.hpp"

namespace tula::service {
namespace {

using nlohmann::json;
using records::JobState;
namespace fs = std::filesystem;

// A stand-in for `tula` that writes its arguments to `args_file` and exits 1.
std::string fake_tula(const fs::path& dir, const fs::path& args_file) {
  const fs::path script = dir / "fake-tula";
  std::ofstream(script) << "#!/bin/sh\necho \"$@\" > '" << args_file.string() << "'\nexit 1\n";
  fs::permissions(script, fs::perms::owner_all);
  return script.string();
}

struct Server {
  explicit Server(const fs::path& dir, const std::string& root)
      : store((dir / "jobs.db").string()), rules{{root}, "local"} {
    options.workdir = (dir / "work").string();
    options.tula_binary = fake_tula(dir, args_file = dir / "args");
    options.data_roots = rules.data_roots;
    options.poll_s = 0.05;
  }
  int64_t submit(const json& spec) {
    const json checked = check_job_spec(spec, rules);
    return store.submit(checked, "", [this](int64_t id) { return options.workdir + "/jobs/" + std::to_string(id); }).job.id;
  }
  bool ended(int64_t id) { return records::is_final(store.job(id)->state); }

  Store store;
  EventLog events;
  ReportCache reports;
  SpecRules rules;
  SupervisorOptions options;
  fs::path args_file;
};

json spec_reading(const fs::path& data_dir) {
  return {{"model", "small_cnn"}, {"dataset", "mnist"}, {"epochs", 1}, {"data_dir", data_dir.string()}};
}

TEST(StartRecheck, ALinkThatLeadsOutsideBetweenSubmitAndStartFailsTheJobBeforeAnyProcess) {
  testing::TempDir dir;
  const fs::path root = dir.path() / "data", outside = dir.path() / "secret", link = root / "mnist";
  fs::create_directories(root);
  fs::create_directories(outside);
  fs::create_symlink(dir.path() / "not-yet", link);  // dangles: taken as written at the submit
  Server server(dir.path(), root.string());
  const int64_t id = server.submit(spec_reading(link));
  fs::remove(link);
  fs::create_symlink(outside, link);

  Supervisor supervisor(server.store, server.events, server.reports, server.options);
  supervisor.start();
  ASSERT_TRUE(testing::eventually([&] { return server.ended(id); }, "job " + std::to_string(id) + " to end"));
  supervisor.stop(false);
  const auto job = server.store.job(id);
  EXPECT_EQ(job->state, JobState::Failed);
  EXPECT_NE(job->reason.find("data_dir '" + link.string() + "' now leads to " + outside.string()), std::string::npos)
      << job->reason;
  EXPECT_FALSE(fs::exists(server.args_file)) << "a tune process was started";
  const json attempts = server.store.attempts(id);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0]["result"], "could_not_start");
}

TEST(StartRecheck, APathStillInsideStartsTuneWithTheRootsToCheckAgain) {
  testing::TempDir dir;
  const fs::path root = dir.path() / "data";
  fs::create_directories(root / "mnist");
  Server server(dir.path(), root.string());
  const int64_t id = server.submit(spec_reading(root / "mnist"));

  Supervisor supervisor(server.store, server.events, server.reports, server.options);
  supervisor.start();
  ASSERT_TRUE(testing::eventually([&] { return server.ended(id); }, "job " + std::to_string(id) + " to end"));
  supervisor.stop(false);
  EXPECT_NE(testing::read_text(server.args_file).find("--data-root " + root.string()), std::string::npos)
      << testing::read_text(server.args_file);
}

}  // namespace
}  // namespace tula::service
