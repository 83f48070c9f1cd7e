// Child processes on real programs: what they start with (environment,
// directory, descriptors, signals, group), why one could not start, how each
// ended, waiting with a time limit, and the death of a child with its parent.
// Every wait is for an event, with a deadline far beyond its usual time.
#include "common/process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "helpers/proc_state.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/read_pipe.hpp"
#include "helpers/wait.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tula::testing::eventually;
using tula::testing::kPatience;
using tula::testing::read_text;
using tula::testing::read_all;
using tula::testing::TempDir;

// How `child` ended, waiting for it generously; a failure naming `what` when it does not end.
ExitStatus end_of(Child& child, const std::string& what) {
  const auto status = child.wait_for(kPatience);
  if (!status) {
    ADD_FAILURE() << "gave up after " << kPatience.count() << " s waiting for " << what << " (pid " << child.pid()
                  << ") to end";
    return ExitStatus::unknown();
  }
  return *status;
}

// A child that runs until it is signalled.
Child sleeper(SpawnOptions options = {}) { return Child({"/bin/sleep", "600"}, options); }

// A signal set from /proc/PID/status ("SigIgn:", "SigBlk:") holds `sig`.
bool status_mask_has(pid_t pid, const std::string& field, int sig) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return (std::stoull(line.substr(field.size()), nullptr, 16) >> (sig - 1)) & 1;
  }
  ADD_FAILURE() << "no " << field << " in /proc/" << pid << "/status";
  return false;
}

// Sets an environment variable for one test and restores it after.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    const char* before = std::getenv(name);
    if (before != nullptr) before_ = before;
    ::setenv(name, value, 1);
  }
  ~ScopedVariable() {
    if (before_) {
      ::setenv(name_, before_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> before_;
};

TEST(Spawn, RunsInTheGivenDirectoryWithTheGivenVariables) {
  TempDir dir("tula-process");
  const ScopedVariable kept("TULA_PROCESS_TEST_KEPT", "kept");
  const ScopedVariable replaced("TULA_PROCESS_TEST_REPLACED", "old");
  Child child({"/bin/sh", "-c",
               "pwd; echo \"$TULA_PROCESS_TEST_SET $TULA_PROCESS_TEST_KEPT $TULA_PROCESS_TEST_REPLACED\"; "
               "env | grep -c '^TULA_PROCESS_TEST_REPLACED='"},
              SpawnOptions()
                  .cwd(dir.str())
                  .env("TULA_PROCESS_TEST_SET", "forty two")
                  .env("TULA_PROCESS_TEST_REPLACED", "new")
                  .output_pipe(true));
  EXPECT_EQ(read_all(child.output_fd()), fs::canonical(dir.path()).string() + "\nforty two kept new\n1\n");
  EXPECT_TRUE(end_of(child, "the shell").success());
}

TEST(Spawn, CapturesStdoutAndStderrInOnePipeWithStdinAtEndOfFile) {
  Child child({"/bin/sh", "-c", "echo out; echo err >&2; cat; echo end"},
              SpawnOptions().output_pipe(true).stdin_from_null(true));
  EXPECT_EQ(read_all(child.output_fd()), "out\nerr\nend\n");
  EXPECT_TRUE(end_of(child, "the shell").success());
}

TEST(Spawn, AppendsToTheOutputFile) {
  TempDir dir("tula-process");
  const std::string log = dir.file("child.log");
  std::ofstream(log) << "before\n";
  Child child({"/bin/sh", "-c", "echo out; echo err >&2"}, SpawnOptions().output_file(log));
  EXPECT_TRUE(end_of(child, "the shell").success());
  EXPECT_EQ(read_text(log), "before\nout\nerr\n");
}

TEST(Spawn, LooksUpThePathOnlyWhenAsked) {
  TempDir dir("tula-process");
  Child searched({"sh", "-c", "exit 0"}, SpawnOptions().search_path(true));
  EXPECT_FALSE(searched.start_failure()) << searched.start_failure()->describe();
  EXPECT_TRUE(end_of(searched, "sh found in PATH").success());
  // Not searched, "sh" names a file in the (empty) working directory.
  Child relative({"sh", "-c", "exit 0"}, SpawnOptions().cwd(dir.str()));
  ASSERT_TRUE(relative.start_failure());
  EXPECT_EQ(relative.start_failure()->error, ENOENT);
  EXPECT_EQ(end_of(relative, "the child that found no ./sh"), ExitStatus::exited(127));
}

TEST(Spawn, SaysWhyAMissingProgramDidNotStart) {
  TempDir dir("tula-process");
  const std::string log = dir.file("child.log");
  Child child({"/nonexistent/tula-program", "--flag"}, SpawnOptions().output_file(log));
  ASSERT_TRUE(child.start_failure()) << "a missing program was reported as started";
  const StartFailure& failure = *child.start_failure();
  EXPECT_EQ(failure.step, StartStep::Execute);
  EXPECT_EQ(failure.error, ENOENT);
  EXPECT_EQ(failure.describe(), "cannot execute /nonexistent/tula-program: No such file or directory");
  EXPECT_EQ(failure.exit_code(), 127);
  EXPECT_EQ(end_of(child, "the child that could not execute"), ExitStatus::exited(127));
  EXPECT_EQ(last_line_of(log), failure.describe()) << "the reason belongs in the child's log";
}

TEST(Spawn, SaysWhyAProgramCannotBeExecuted) {
  TempDir dir("tula-process");
  const fs::path script = dir.path() / "not-executable";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  fs::permissions(script, fs::perms::owner_read | fs::perms::owner_write);
  Child child({script.string()}, SpawnOptions());
  ASSERT_TRUE(child.start_failure());
  EXPECT_EQ(child.start_failure()->error, EACCES);
  EXPECT_EQ(child.start_failure()->describe(), "cannot execute " + script.string() + ": Permission denied");
  EXPECT_EQ(end_of(child, "the child that could not execute"), ExitStatus::exited(126));
}

TEST(Spawn, SaysWhyItCannotEnterTheDirectory) {
  Child child({"/bin/true"}, SpawnOptions().cwd("/nonexistent/tula-directory"));
  ASSERT_TRUE(child.start_failure());
  EXPECT_EQ(child.start_failure()->step, StartStep::EnterDirectory);
  EXPECT_EQ(child.start_failure()->describe(), "cannot enter /nonexistent/tula-directory: No such file or directory");
  EXPECT_EQ(end_of(child, "the child that could not enter its directory"), ExitStatus::exited(126));
}

TEST(Spawn, RefusesWhatCannotWork) {
  EXPECT_THROW(spawn({}), std::invalid_argument);
  EXPECT_THROW(spawn({"/bin/true"}, SpawnOptions().output_file("/tmp/x").output_pipe(true)), std::invalid_argument);
  EXPECT_THROW(spawn({"/bin/true"}, SpawnOptions().inherit_fd(0, 1)), std::invalid_argument);
  try {
    spawn({"/bin/true"}, SpawnOptions().output_file("/nonexistent/dir/child.log"));
    ADD_FAILURE() << "a log in a missing directory was opened";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/child.log"), std::string::npos) << e.what();
  }
}

TEST(Spawn, PassesTheInheritedFdAndClosesTheOthers) {
  TempDir dir("tula-process");
  const std::string file = dir.file("inherited");
  Fd inherited(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  Fd stray(::open("/dev/null", O_RDONLY));  // not close-on-exec: a child would keep it
  ASSERT_TRUE(inherited && stray);
  const std::string script = "echo written >&3; if [ -e /proc/$$/fd/" + std::to_string(stray.get()) +
                             " ]; then echo stray open; else echo stray closed; fi";
  Child closing({"/bin/sh", "-c", script},
                SpawnOptions().inherit_fd(inherited.get(), 3).close_other_fds(true).output_pipe(true));
  EXPECT_EQ(read_all(closing.output_fd()), "stray closed\n");
  EXPECT_TRUE(end_of(closing, "the shell").success());
  EXPECT_EQ(read_text(file), "written\n");
  // The same check sees a descriptor left open when nothing closes it.
  Child keeping({"/bin/sh", "-c", script}, SpawnOptions().inherit_fd(inherited.get(), 3).output_pipe(true));
  EXPECT_EQ(read_all(keeping.output_fd()), "stray open\n");
  EXPECT_TRUE(end_of(keeping, "the shell").success());
}

TEST(Spawn, WritesItsPidToTheInheritedFileBeforeItRuns) {
  TempDir dir("tula-process");
  const std::string file = dir.file("pid");
  std::ofstream(file) << "a longer text than any pid\n";
  Fd inherited(::open(file.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(inherited);
  Child child = sleeper(SpawnOptions().inherit_fd(inherited.get(), 3).write_pid_to_inherited_fd(true));
  EXPECT_EQ(read_text(file), std::to_string(child.pid()) + "\n");
  EXPECT_TRUE(child.signal(SIGKILL));
  EXPECT_EQ(end_of(child, "sleep"), ExitStatus::killed(SIGKILL));
}

TEST(Spawn, StartsANewSessionOrProcessGroup) {
  Child session_leader = sleeper(SpawnOptions().new_session(true));
  EXPECT_EQ(::getsid(session_leader.pid()), session_leader.pid());
  EXPECT_EQ(session_of(session_leader.pid()), session_leader.pid());
  Child group_leader = sleeper(SpawnOptions().new_process_group(true));
  EXPECT_EQ(::getpgid(group_leader.pid()), group_leader.pid());
  EXPECT_EQ(::getsid(group_leader.pid()), ::getsid(0)) << "a new group, in our session";
  Child plain = sleeper();
  EXPECT_EQ(::getpgid(plain.pid()), ::getpgid(0));
}

// Ignored and blocked signals survive exec; the child starts with the ones it
// is told to reset at their defaults, and unblocked.
TEST(Spawn, StartsWithTheSignalsItIsGiven) {
  struct sigaction ignore {}, usr1_before {}, winch_before {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGUSR1, &ignore, &usr1_before);
  ::sigaction(SIGWINCH, &ignore, &winch_before);
  sigset_t hup, mask_before;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &hup, &mask_before);

  Child reset = sleeper(SpawnOptions().reset_signals({SIGUSR1}).ignore_signals({SIGUSR2}));
  EXPECT_FALSE(status_mask_has(reset.pid(), "SigIgn:", SIGUSR1)) << "SIGUSR1 was to start at its default";
  EXPECT_TRUE(status_mask_has(reset.pid(), "SigIgn:", SIGWINCH)) << "an ignored signal not reset stays ignored";
  EXPECT_TRUE(status_mask_has(reset.pid(), "SigIgn:", SIGUSR2)) << "SIGUSR2 was to start ignored";
  EXPECT_FALSE(status_mask_has(reset.pid(), "SigBlk:", SIGHUP)) << "the child was to start with nothing blocked";
  Child masked = sleeper(SpawnOptions().signal_mask(hup));
  EXPECT_TRUE(status_mask_has(masked.pid(), "SigBlk:", SIGHUP)) << "the mask given was not the child's";

  ::pthread_sigmask(SIG_SETMASK, &mask_before, nullptr);
  ::sigaction(SIGUSR1, &usr1_before, nullptr);
  ::sigaction(SIGWINCH, &winch_before, nullptr);
}

TEST(ExitStatus, TellsAnExitFromASignal) {
  Child failing({"/bin/sh", "-c", "exit 3"}, SpawnOptions());
  const ExitStatus failed = end_of(failing, "the shell that exits 3");
  EXPECT_TRUE(failed.is_exited());
  EXPECT_FALSE(failed.success());
  EXPECT_EQ(failed.exit_code(), 3);
  EXPECT_EQ(failed.signal(), 0);
  EXPECT_EQ(failed.describe(), "exit status 3");

  Child killed({"/bin/sh", "-c", "kill -KILL $$"}, SpawnOptions());
  const ExitStatus kill = end_of(killed, "the shell that kills itself");
  EXPECT_TRUE(kill.is_killed());
  EXPECT_EQ(kill.signal(), SIGKILL);
  EXPECT_EQ(kill.exit_code(), 128 + SIGKILL);
  EXPECT_EQ(kill.describe(), "killed by signal 9 (Killed)");

  Child fine({"/bin/true"}, SpawnOptions());
  EXPECT_TRUE(end_of(fine, "true").success());
}

TEST(ExitStatus, NamesSignalsAndTheUnknown) {
  EXPECT_EQ(ExitStatus::unknown().exit_code(), -1);
  EXPECT_EQ(ExitStatus::unknown().describe(), "exit status unknown");
  EXPECT_EQ(ExitStatus::from_wait_status(0x0300), ExitStatus::exited(3));
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_description(SIGTERM), "Terminated");
}

TEST(Wait, GivesUpAtTheTimeLimitWhileTheChildRuns) {
  Child child = sleeper();
  EXPECT_FALSE(child.try_wait()) << "sleep 600 ended at once";
  EXPECT_FALSE(child.wait_for(20ms)) << "sleep 600 ended within 20 ms";
  EXPECT_FALSE(tula::testing::process_gone(child.pid()));
  EXPECT_TRUE(child.signal(SIGTERM));
  EXPECT_EQ(end_of(child, "sleep after SIGTERM"), ExitStatus::killed(SIGTERM));
  EXPECT_FALSE(child.signal(SIGTERM)) << "a reaped child's pid is no longer ours to signal";
}

TEST(Wait, PeekingLeavesTheZombie) {
  Child child({"/bin/sh", "-c", "exit 4"}, SpawnOptions());
  std::optional<ExitStatus> peeked;
  ASSERT_TRUE(eventually([&] { return (peeked = peek_exit(child.pid())).has_value(); }, "the shell to exit"));
  EXPECT_EQ(*peeked, ExitStatus::exited(4));
  EXPECT_EQ(tula::testing::process_state(child.pid()), 'Z') << "peeking reaped the child";
  EXPECT_EQ(child.try_wait(), ExitStatus::exited(4));
}

TEST(Wait, AProcessNotOursHasNoStatusToReap) {
  EXPECT_EQ(try_reap(::getppid()), ExitStatus::unknown());
  EXPECT_EQ(wait_for(::getppid(), 1s), ExitStatus::unknown());
}

TEST(Child, KillsAndReapsAChildStillRunningWhenItGoes) {
  pid_t pid = -1;
  {
    Child child = sleeper();
    pid = child.pid();
  }
  EXPECT_TRUE(tula::testing::process_gone(pid));
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1) << "the child was left unreaped";
}

TEST(Signal, ReachesTheGroupAndTheSession) {
  TempDir dir("tula-process");
  for (const bool session : {false, true}) {
    const std::string pid_file = dir.file(session ? "session.pid" : "group.pid");
    Child shell({"/bin/sh", "-c", "sleep 600 & echo $! > " + pid_file + "; wait"},
                SpawnOptions().new_session(session).new_process_group(!session));
    ASSERT_TRUE(eventually([&] { return read_text(pid_file).find('\n') != std::string::npos; },
                           "the shell to write its sleeper's pid to " + pid_file));
    const pid_t sleeper_pid = std::stoi(read_text(pid_file));
    if (session) {
      EXPECT_EQ(signal_session(shell.pid(), SIGKILL), 2) << "the shell and its sleeper";
    } else {
      EXPECT_TRUE(shell.signal_group(SIGKILL));
    }
    EXPECT_EQ(end_of(shell, "the shell"), ExitStatus::killed(SIGKILL));
    EXPECT_TRUE(eventually([&] { return tula::testing::process_gone(sleeper_pid); },
                           "the shell's sleeper (pid " + std::to_string(sleeper_pid) + ") to die"));
  }
}

// A process that starts a sleeper with a parent-death signal, reports its pid
// on `report` and exits once `go` closes. Runs in a forked copy of this test,
// which closes first the ends of both pipes that are the test's.
[[noreturn]] void intermediate(const int (&report)[2], const int (&go)[2]) {
  ::close(report[0]);
  ::close(go[1]);
  const Started started = spawn({"/bin/sleep", "600"}, SpawnOptions().parent_death_signal(SIGKILL));
  (void)!::write(report[1], &started.pid, sizeof started.pid);
  char byte;
  while (::read(go[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::_exit(0);
}

TEST(Spawn, TheChildDiesWithItsParent) {
  int report[2], go[2];
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) intermediate(report, go);
  ::close(report[1]);
  ::close(go[0]);
  pid_t child = -1;
  const ssize_t n = ::read(report[0], &child, sizeof child);
  ::close(report[0]);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof child)) << "the intermediate process reported no child";
  EXPECT_FALSE(tula::testing::process_gone(child)) << "the sleeper died before its parent";
  ::close(go[1]);  // the intermediate process exits
  EXPECT_EQ(wait_for(parent, kPatience), ExitStatus::exited(0)) << "the intermediate process did not exit";
  const auto died = eventually([&] { return tula::testing::process_gone(child); },
                               "the sleeper (pid " + std::to_string(child) + ") to die with its parent (pid " +
                                   std::to_string(parent) + ")");
  EXPECT_TRUE(died);
  if (!died) ::kill(child, SIGKILL);
}

TEST(LastLineOf, IsTheLastNonEmptyLine) {
  TempDir dir("tula-process");
  std::ofstream(dir.file("trailing")) << "first\nthe reason\n\n\n";
  std::ofstream(dir.file("unfinished")) << "first\nthe reason";
  std::ofstream(dir.file("blank")) << "\n\n";
  EXPECT_EQ(last_line_of(dir.file("trailing")), "the reason");
  EXPECT_EQ(last_line_of(dir.file("unfinished")), "the reason");
  EXPECT_EQ(last_line_of(dir.file("blank")), "");
  EXPECT_EQ(last_line_of(dir.file("missing")), "");
}

TEST(FindProgram, FindsWhatIsInPathOnly) {
  EXPECT_NE(find_program("sh"), "");
  EXPECT_EQ(find_program("tula-no-such-program"), "");
  EXPECT_EQ(find_program("/bin/sh"), "/bin/sh");
  EXPECT_EQ(find_program("/nonexistent/sh"), "");
}

}  // namespace
}  // namespace tula::common
