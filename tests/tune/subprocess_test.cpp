// The backends' helper for short external commands: output, status, time limit.
#include "tune/subprocess.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>

#include "helpers/proc_state.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"

namespace tula::tune {
namespace {

TEST(RunProcess, CapturesStdoutAndStderrAndTheExitStatus) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.output, "out\nerr\n");
  EXPECT_EQ(r.describe(), "exit status 3");
}

TEST(RunProcess, FindsProgramsInPathAndPassesArgumentsUnchanged) {
  const ProcessResult r = run_process({"printf", "%s|", "two words", "'quoted'", "$HOME"});
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.output, "two words|'quoted'|$HOME|");
}

TEST(RunProcess, ReportsASignal) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.signal, 9);
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_NE(r.describe().find("killed by signal 9"), std::string::npos) << r.describe();
}

TEST(RunProcess, SaysWhyAProgramCannotStart) {
  const ProcessResult r = run_process({"tula-no-such-program"});
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_NE(r.describe().find("No such file or directory"), std::string::npos) << r.describe();
}

TEST(RunProcess, TimeLimitKillsTheCommandAndWhatItStarted) {
  testing::TempDir dir("tula-subprocess");
  const std::string pid_file = dir.file("child.pid");
  // The shell starts a sleeper in the background and waits for it. The
  // limit only has to outlast the shell's start on a loaded machine, which
  // the pid file then proves; the command itself would run for ten minutes.
  const ProcessResult r = run_process({"/bin/sh", "-c", "sleep 600 & echo $! > " + pid_file + "; wait"},
                                      std::chrono::seconds(5));
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.signal, 9);
  EXPECT_NE(r.describe().find("timed out"), std::string::npos) << r.describe();
  const std::string pid = testing::read_text(pid_file);
  ASSERT_FALSE(pid.empty()) << "the shell did not start its sleeper within the 5 s limit (no " << pid_file << ")";
  EXPECT_TRUE(testing::eventually([&] { return testing::process_gone(std::stoi(pid)); },
                                  "the background sleeper (pid " + pid + ") to end"));
}

TEST(RunProcess, ReturnsWhenTheCommandExitsEvenIfItsChildKeepsTheOutputOpen) {
  testing::TempDir dir("tula-subprocess");
  const std::string pid_file = dir.file("child.pid");
  // A child left behind holds the pipe; the command itself is done.
  const ProcessResult r = run_process({"/bin/sh", "-c", "(sleep 60 & echo $! > " + pid_file + "); echo done"},
                                      std::chrono::seconds(30));
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output, "done\n");
  const std::string pid = testing::read_text(pid_file);
  if (!pid.empty()) ::kill(std::stoi(pid), SIGKILL);
}

TEST(RunProcess, RunsInTheGivenDirectoryWithTheGivenVariables) {
  testing::TempDir dir("tula-subprocess");
  ProcessOptions options;
  options.cwd = dir.str();
  options.env = {{"TULA_TEST_VALUE", "forty two"}};
  const ProcessResult r = run_process({"/bin/sh", "-c", "pwd; echo \"$TULA_TEST_VALUE\""}, options);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.output, std::filesystem::canonical(dir.path()).string() + "\nforty two\n");
}

TEST(RunProcess, KeepsAtMostMaxOutputBytes) {
  ProcessOptions options;
  options.max_output = 1000;
  const ProcessResult r = run_process({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, options);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_TRUE(r.output_truncated);
}

TEST(FindProgram, FindsWhatIsInPathOnly) {
  EXPECT_EQ(find_program("sh").empty(), false);
  EXPECT_EQ(find_program("tula-no-such-program"), "");
  EXPECT_EQ(find_program("/bin/sh"), "/bin/sh");
  EXPECT_EQ(find_program("/nonexistent/sh"), "");
}

}  // namespace
}  // namespace tula::tune
