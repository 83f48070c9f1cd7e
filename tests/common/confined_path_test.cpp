// Paths held inside roots: resolved with symlinks followed, then opened from
// the root one component at a time with none followed, so a link swapped in
// after the check opens nothing.
#include "common/confined_path.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers/expect_error.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;

struct Tree {
  Tree() {
    fs::create_directories(root / "sets" / "mnist");
    fs::create_directories(outside);
    std::ofstream(root / "sets" / "mnist" / "labels") << "inside";
    std::ofstream(outside / "labels") << "outside";
  }
  testing::TempDir dir;
  fs::path root = dir.path() / "data", outside = dir.path() / "secret";
};

TEST(ConfinedPath, AFileUnderTheRootOpensAndReads) {
  Tree t;
  const Fd fd = open_under_roots("--profile", (t.root / "sets/mnist/labels").string(), {t.root.string()}, O_RDONLY);
  EXPECT_EQ(read_whole(fd, "labels"), "inside");
  // A link that stays inside is followed when resolving.
  fs::create_symlink(t.root / "sets" / "mnist", t.root / "current");
  EXPECT_EQ(read_whole(open_under_roots("f", (t.root / "current/labels").string(), {t.root.string()}, O_RDONLY), "l"), "inside");
}

TEST(ConfinedPath, APathThatLeadsOutsideIsRefusedNamingWhereItLeads) {
  Tree t;
  fs::create_symlink(t.outside, t.root / "escape");
  expect_error<PathOutsideRoots>(
      [&] { open_under_roots("--data-dir", (t.root / "escape").string(), {t.root.string()}, O_RDONLY | O_DIRECTORY); },
      {"--data-dir '" + (t.root / "escape").string() + "' leads to " + t.outside.string(), "outside the data roots"});
  expect_error<PathOutsideRoots>([&] { confine("f", (t.root / "../secret/labels").string(), {t.root.string()}); },
                                 {"outside the data roots"});
  EXPECT_FALSE(resolve_under((t.root.string() + "-sibling/x"), {t.root.string()})) << "a prefix of the name is not a parent";
  EXPECT_FALSE(resolve_under("relative/x", {t.root.string()}));
}

TEST(ConfinedPath, AComponentSwappedForALinkAfterTheCheckOpensNothing) {
  Tree t;
  const auto checked = resolve_under((t.root / "sets/mnist/labels").string(), {t.root.string()});
  ASSERT_TRUE(checked);
  // Between the check and the open, "sets" becomes a link to a tree outside.
  fs::create_directories(t.outside / "mnist");
  std::ofstream(t.outside / "mnist" / "labels") << "outside";
  fs::rename(t.root / "sets", t.dir.path() / "old-sets");
  fs::create_symlink(t.outside, t.root / "sets");
  expect_error<PathOutsideRoots>([&] { open_confined(*checked, O_RDONLY, "--profile", "p"); },
                                 {"--profile 'p': " + (t.root / "sets").string(), "symlink", "nothing was opened"});
  // The last component too.
  const auto file = resolve_under((t.root / "plain").string(), {t.root.string()});
  fs::create_symlink(t.outside / "labels", t.root / "plain");
  expect_error<PathOutsideRoots>([&] { open_confined(*file, O_RDONLY, "--profile", "p"); }, {"symlink"});
}

TEST(ConfinedPath, ADanglingLinkResolvesAsWrittenButDoesNotOpen) {
  Tree t;
  fs::create_symlink(t.dir.path() / "later", t.root / "soon");
  const auto c = resolve_under((t.root / "soon").string(), {t.root.string()});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->resolved, (t.root / "soon").string());
  expect_error<PathOutsideRoots>([&] { open_confined(*c, O_RDONLY, "--data-dir", "d"); }, {"symlink"});
}

TEST(ConfinedPath, TheRootItselfOpens) {
  Tree t;
  const auto c = resolve_under(t.root.string() + "/", {t.root.string()});
  ASSERT_TRUE(c);
  EXPECT_TRUE(open_confined(*c, O_RDONLY | O_DIRECTORY, "d", "d"));
}

}  // namespace
}  // namespace tula::common
