// `tula jobs`, the service's command-line client, end to end as a user runs
// it against a real server: submit and watch a job to its end, then list,
// show and watch it again, and the clear refusals of a missing job and of a
// server that is not there.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "service/end_to_end/serve_fixture.hpp"

namespace tula::testing {
namespace {

std::string jobs_command(const Server& server, const std::string& args) {
  return tula_binary() + " jobs " + args + " --server http://127.0.0.1:" + std::to_string(server.port());
}

TEST(JobsClient, SubmitsAndWatchesAJobToItsEndThenListsShowsAndWatchesItAgain) {
  TempDir dir;
  Server server(dir);
  // The test job of the other end-to-end tests (serve_fixture.hpp), as flags,
  // on four times the samples so that its watches (every 4 steps) predict.
  const CommandResult submitted = run_command(
      jobs_command(server, "submit --model small_cnn --dataset synthetic --epochs 2 --set synthetic_size=2048 "
                           "--set pilot_steps=6 --set watch_every=4 --watch"),
      300);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output << server.logs_of(1);
  EXPECT_NE(submitted.output.find("job 1 queued: http://127.0.0.1:"), std::string::npos) << submitted.output;
  EXPECT_NE(submitted.output.find("job 1 succeeded: "), std::string::npos) << submitted.output;
  // Off a terminal every progress event is a line, and its time left reads as
  // `tula tune`'s own progress line: "~12s left (predicted)" or with a range.
  EXPECT_NE(submitted.output.find(" left ("), std::string::npos) << submitted.output;
  EXPECT_NE(submitted.output.find("predicted)"), std::string::npos) << submitted.output;

  const CommandResult listed = run_command(jobs_command(server, "list --state succeeded"));
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("small_cnn/synthetic"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("100%"), std::string::npos) << "a succeeded job is done:\n" << listed.output;

  const CommandResult shown = run_command(jobs_command(server, "show 1"));
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("\"state\": \"succeeded\""), std::string::npos) << shown.output;

  // Watching a job that has ended says how it ended and exits as it ended.
  const CommandResult watched = run_command(jobs_command(server, "watch 1"), 60);
  EXPECT_EQ(watched.exit_code, 0) << watched.output;
  EXPECT_NE(watched.output.find("job 1 succeeded: "), std::string::npos) << watched.output;

  expect_tula_fails("jobs show 7 --server http://127.0.0.1:" + std::to_string(server.port()), "show: HTTP 404");
  server.process().send(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0);
}

TEST(JobsClient, SaysWhichServerItCannotReach) {
  const std::string server = "http://127.0.0.1:" + std::to_string(free_port());
  expect_tula_fails("jobs list --server " + server, "list: cannot reach " + server);
  expect_tula_fails("jobs list --server 127.0.0.1:8470", "--server 127.0.0.1:8470 is not a URL like http://HOST:PORT");
}

}  // namespace
}  // namespace tula::testing
