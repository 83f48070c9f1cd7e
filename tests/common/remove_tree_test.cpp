#include "common/remove_tree.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "helpers/temp_dir.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;

TEST(RemoveTree, RemovesAFolderWithEverythingInItButNotWhatALinkPointsTo) {
  const testing::TempDir tmp;
  const fs::path keep = tmp.path() / "keep.txt";
  std::ofstream(keep) << "outside";
  const fs::path root = tmp.path() / "root";
  fs::create_directories(root / "a" / "b");
  std::ofstream(root / "a" / "b" / "file") << "x";
  std::ofstream(root / "top") << "y";
  fs::create_symlink(keep, root / "a" / "link");
  fs::create_directory_symlink(tmp.path(), root / "loop");
  EXPECT_EQ(remove_tree(root), "");
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(keep)) << "a link is removed, not followed";
}

TEST(RemoveTree, AFileAndAMissingPathAreFine) {
  const testing::TempDir tmp;
  const fs::path file = tmp.path() / "f";
  std::ofstream(file) << "z";
  EXPECT_EQ(remove_tree(file), "");
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(remove_tree(tmp.path() / "never-there"), "");
}

TEST(RemoveTree, SaysWhatItCouldNotRemove) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may remove entries from a read-only folder";
  const testing::TempDir tmp;
  const fs::path dir = tmp.path() / "locked";
  fs::create_directories(dir);
  std::ofstream(dir / "inside") << "w";
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const auto error = remove_tree(dir);
  fs::permissions(dir, fs::perms::owner_all);
  EXPECT_NE(error.find("inside"), std::string::npos) << error;
}

}  // namespace
}  // namespace tula::common
