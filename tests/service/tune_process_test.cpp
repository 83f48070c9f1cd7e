// The lock that ties a job to its one tune process, on real processes.
#include "service/tune_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"

namespace tula::service {
namespace {

TEST(TuneProcess, TheLockNamesTheLiveProcessAndRefusesASecond) {
  testing::TempDir dir;
  const std::string lock = (dir.path() / "1.lock").string(), log = (dir.path() / "1.log").string();
  EXPECT_FALSE(lock_holder(lock)) << "never started";
  // A shell that starts a child of its own: the lock must stay held while either lives.
  const pid_t pid = start_tune_process({"/bin/sh", "-c", "sleep 600 & wait"}, lock, log, dir.str());
  ASSERT_TRUE(testing::eventually([&] { return lock_holder(lock).value_or(0) == pid; }, "the lock file to name pid " + std::to_string(pid)));
  EXPECT_THROW(start_tune_process({"/bin/true"}, lock, log, dir.str()), JobBusy);
  ASSERT_TRUE(testing::eventually([&] { return signal_session(pid, 0) >= 2; }, "the shell to start its sleep"));
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(testing::eventually([&] { return reap_child(pid).has_value(); }, "the shell to end"));
  EXPECT_TRUE(lock_holder(lock)) << "its child (sleep) still holds the lock";
  EXPECT_GE(signal_session(pid, SIGKILL), 1) << "the child is found by its session";
  EXPECT_TRUE(testing::eventually([&] { return !lock_holder(lock); }, "the lock to be released once the session is gone"));
}

TEST(TuneProcess, ItOutlivesItsStarterInASessionOfItsOwn) {
  testing::TempDir dir;
  const std::string lock = (dir.path() / "2.lock").string();
  const pid_t pid = start_tune_process({"/bin/sleep", "600"}, lock, (dir.path() / "2.log").string(), dir.str());
  ASSERT_TRUE(testing::eventually([&] { return ::getsid(pid) == pid; }, "the child to lead its own session"));
  ::kill(pid, SIGKILL);
  EXPECT_TRUE(testing::eventually([&] { return reap_child(pid).has_value(); }, "sleep to end"));
}

TEST(TuneProcess, AProgramThatCannotRunExitsWith127) {
  testing::TempDir dir;
  const pid_t pid = start_tune_process({"/nonexistent/tula"}, (dir.path() / "3.lock").string(),
                                       (dir.path() / "3.log").string(), dir.str());
  std::optional<int> status;
  ASSERT_TRUE(testing::eventually([&] { return (status = reap_child(pid)).has_value(); }, "the child to fail"));
  EXPECT_EQ(*status, 127);
}

}  // namespace
}  // namespace tula::service
