// Input files opened beneath their data root's descriptor when the process
// was given roots (as the jobs of `tula serve` are): a symlink or a swapped
// folder that leads out of the root is refused naming the path; without
// roots, links are followed as a user's own run expects.
#include "common/input_roots.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/open_beneath.hpp"
#include "helpers/expect_error.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;

// A data root with a set in it, a secret beside it, and TULA_DATA_ROOTS
// naming the root for as long as this lives (when `confined`).
struct Roots {
  explicit Roots(bool confined = true) {
    fs::create_directories(root / "set");
    fs::create_directories(outside);
    std::ofstream(root / "set" / "labels") << "inside";
    std::ofstream(outside / "labels") << "outside";
    if (confined) pass_input_roots({root.string()});
  }
  ~Roots() { ::unsetenv(kDataRootsVariable); }
  testing::TempDir dir;
  fs::path root = fs::canonical(dir.path()) / "data", outside = fs::canonical(dir.path()) / "secret";
};

std::string read(const Fd& fd) { return read_whole(fd, "file"); }

TEST(InputRoots, AFileUnderTheRootOpensAndALinkThatStaysInsideIsFollowed) {
  Roots r;
  EXPECT_EQ(read(open_input((r.root / "set/labels").string(), O_RDONLY)), "inside");
  fs::create_symlink("set", r.root / "current");
  EXPECT_EQ(read(open_input((r.root / "current/labels").string(), O_RDONLY)), "inside");
}

TEST(InputRoots, ASymlinkInTheDataFolderLeadingOutsideIsRefusedNamingIt) {
  Roots r;
  fs::create_symlink(r.outside / "labels", r.root / "set" / "train-labels");
  const std::string link = (r.root / "set/train-labels").string();
  expect_error<PathOutsideRoots>([&] { (void)open_input(link, O_RDONLY); }, {link, "leads outside the data root"});
  // A relative link that climbs out is refused the same way.
  fs::create_symlink("../../secret/labels", r.root / "set" / "climbs");
  expect_error<PathOutsideRoots>([&] { (void)open_input((r.root / "set/climbs").string(), O_RDONLY); },
                                 {"set/climbs", "leads outside"});
}

TEST(InputRoots, AFolderSwappedForALinkAfterTheCheckIsRefused) {
  Roots r;
  const std::string path = (r.root / "set/labels").string();
  EXPECT_EQ(read(open_input(path, O_RDONLY)), "inside");  // the check
  fs::rename(r.root / "set", r.root / "set.old");
  fs::create_symlink(r.outside, r.root / "set");  // the swap
  expect_error<PathOutsideRoots>([&] { (void)open_input(path, O_RDONLY); }, {path, "leads outside"});
}

TEST(InputRoots, APlaceOutsideEveryRootIsOpenedAsGiven) {
  // A data set's usual place, which the engine picks when a job names no data_dir.
  Roots r;
  EXPECT_EQ(read(open_input((r.outside / "labels").string(), O_RDONLY)), "outside");
}

TEST(InputRoots, WithoutRootsLinksAreFollowed) {
  Roots r(false);
  ASSERT_TRUE(input_roots().empty());
  fs::create_symlink(r.outside / "labels", r.root / "set" / "train-labels");
  EXPECT_EQ(read(open_input((r.root / "set/train-labels").string(), O_RDONLY)), "outside");
}

TEST(InputRoots, TheComponentWalkRefusesEverySymlink) {
  Roots r;
  fs::create_symlink("set", r.root / "current");
  const Fd root(::open(r.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  const Fd direct(open_beneath_by_components(root.get(), "set/labels", O_RDONLY));
  EXPECT_EQ(read(direct), "inside");
  EXPECT_LT(open_beneath_by_components(root.get(), "current/labels", O_RDONLY), 0);
  EXPECT_EQ(errno, ENOTDIR);
  EXPECT_LT(open_beneath_by_components(root.get(), "../secret/labels", O_RDONLY), 0);
  EXPECT_EQ(errno, EXDEV);
}

}  // namespace
}  // namespace tula::common
