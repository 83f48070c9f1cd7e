// A child placed into cgroups and a network namespace before it runs its
// program: where it finds itself, and why it could not be placed. Making
// cgroups and namespaces needs root and a cgroup cpu controller (v1 or v2),
// or iproute2; the tests that need them skip, saying why, where they are
// missing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "common/process.hpp"
#include "helpers/read_pipe.hpp"
#include "helpers/wait.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;
using tula::testing::kPatience;
using tula::testing::read_all;

// What `argv` prints, run with `options`; its exit status must be 0.
std::string output_of(const std::vector<std::string>& argv, SpawnOptions options) {
  Child child(argv, options.output_pipe(true));
  const std::string out = read_all(child.output_fd());
  const auto status = child.wait_for(kPatience);
  EXPECT_TRUE(status && status->success()) << argv.front() << " did not exit 0 within " << kPatience.count() << " s";
  return out;
}

// The directory of the cpu controller's hierarchy: v1's own, or v2's tree.
std::optional<fs::path> cpu_hierarchy() {
  if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) return fs::path("/sys/fs/cgroup");
  if (fs::exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")) return fs::path("/sys/fs/cgroup/cpu");
  return std::nullopt;
}

// A cgroup made for one test, removed after it (its processes reaped by then).
class ScopedCgroup {
 public:
  explicit ScopedCgroup(const fs::path& parent)
      : path_(parent / ("tula-spawn-test-" + std::to_string(::getpid()))) {
    made_ = ::mkdir(path_.c_str(), 0755) == 0;
  }
  ~ScopedCgroup() {
    if (made_) ::rmdir(path_.c_str());
  }
  bool made() const { return made_; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool made_ = false;
};

// A network namespace made with iproute2 for one test.
class ScopedNetworkNamespace {
 public:
  ScopedNetworkNamespace() : name_("tula-spawn-test-" + std::to_string(::getpid())) {
    Child add({"ip", "netns", "add", name_}, SpawnOptions().search_path(true).output_file("/dev/null"));
    const auto status = add.wait_for(kPatience);
    made_ = status && status->success();
  }
  ~ScopedNetworkNamespace() {
    if (!made_) return;
    Child del({"ip", "netns", "del", name_}, SpawnOptions().search_path(true));
    del.wait_for(kPatience);
  }
  bool made() const { return made_; }
  std::string path() const { return "/run/netns/" + name_; }

 private:
  std::string name_;
  bool made_ = false;
};

TEST(Placement, TheChildRunsInTheGivenCgroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a cgroup needs root";
  const auto hierarchy = cpu_hierarchy();
  if (!hierarchy) GTEST_SKIP() << "no cgroup cpu controller at /sys/fs/cgroup (v1 or v2)";
  ScopedCgroup cgroup(*hierarchy);
  if (!cgroup.made()) GTEST_SKIP() << "cannot make " << cgroup.path() << " here";
  const std::string cgroups = output_of({"/bin/cat", "/proc/self/cgroup"}, SpawnOptions().cgroups({cgroup.path()}));
  EXPECT_NE(cgroups.find(":/" + cgroup.path().filename().string() + "\n"), std::string::npos)
      << "/proc/self/cgroup of the child:\n" << cgroups;
}

TEST(Placement, TheChildRunsInTheGivenNetworkNamespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "entering a network namespace needs root";
  ScopedNetworkNamespace ns;
  if (!ns.made()) GTEST_SKIP() << "`ip netns add` fails here";
  struct stat st {};
  ASSERT_EQ(::stat(ns.path().c_str(), &st), 0) << ns.path();
  const std::string link = output_of({"/bin/readlink", "/proc/self/ns/net"}, SpawnOptions().network_namespace(ns.path()));
  EXPECT_EQ(link, "net:[" + std::to_string(st.st_ino) + "]\n");
  EXPECT_NE(link, fs::read_symlink("/proc/self/ns/net").string() + "\n") << "the child stayed in our namespace";
}

TEST(Placement, ACgroupOrNamespaceThatIsNotThereIsNamed) {
  try {
    spawn({"/bin/true"}, SpawnOptions().cgroups({"/nonexistent/tula-cgroup"}));
    ADD_FAILURE() << "a missing cgroup was joined";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tula-cgroup/cgroup.procs"), std::string::npos) << e.what();
  }
  try {
    spawn({"/bin/true"}, SpawnOptions().network_namespace("/nonexistent/tula-netns"));
    ADD_FAILURE() << "a missing namespace was entered";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tula-netns"), std::string::npos) << e.what();
  }
}

// A v1 cpuset without CPUs takes no process: the child says so, and exits
// as one that could not start.
TEST(Placement, SaysWhyTheChildCannotJoinItsCgroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a cgroup needs root";
  if (!fs::exists("/sys/fs/cgroup/cpuset/cpuset.cpus")) GTEST_SKIP() << "no cgroup v1 cpuset hierarchy here";
  ScopedCgroup empty("/sys/fs/cgroup/cpuset");
  if (!empty.made()) GTEST_SKIP() << "cannot make " << empty.path() << " here";
  Child child({"/bin/true"}, SpawnOptions().cgroups({empty.path()}));
  ASSERT_TRUE(child.start_failure()) << "a process joined a cpuset without CPUs";
  EXPECT_EQ(child.start_failure()->step, StartStep::JoinCgroup);
  EXPECT_EQ(child.start_failure()->describe(),
            "cannot join the cgroup " + empty.path().string() + ": No space left on device");
  const auto status = child.wait_for(kPatience);
  ASSERT_TRUE(status) << "the child that could not join its cgroup did not end within " << kPatience.count() << " s";
  EXPECT_EQ(*status, ExitStatus::exited(126));
}

}  // namespace
}  // namespace tula::common
