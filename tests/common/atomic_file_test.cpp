// Files written whole or not at all: the new content replaces the old in one
// rename, a failed write leaves the old file and no temporary behind, and an
// impossible target is named in the error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/atomic_file.hpp"
#include "common/remove_tree.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tula-atomic-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    common::remove_tree(dir_);
  }
  void TearDown() override { common::remove_tree(dir_); }

  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Everything in the directory: a leftover temporary file shows up here.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    return names;
  }

  fs::path dir_;
};

TEST_F(AtomicFile, CreatesTheDirectoryAndWritesTheWholeText) {
  const auto path = dir_ / "deeper" / "profile.json";
  write_file_atomically(path.string(), "{\"a\": 1}\n");
  EXPECT_EQ(read(path), "{\"a\": 1}\n");
  EXPECT_EQ(fs::directory_iterator(dir_ / "deeper")->path().filename(), "profile.json");
}

TEST_F(AtomicFile, ReplacesAnExistingFileAndLeavesNoTemporary) {
  const auto path = dir_ / "plan.svg";
  write_file_atomically(path.string(), "old");
  write_file_atomically(path.string(), "new content");
  EXPECT_EQ(read(path), "new content");
  EXPECT_EQ(entries(), std::vector<std::string>{"plan.svg"});
}

TEST_F(AtomicFile, AFailedWriteKeepsTheOldFileAndRemovesTheTemporary) {
  const auto path = dir_ / "latest.pt";
  write_file_atomically(path.string(), "the last good checkpoint");
  try {
    write_atomically(path.string(), [](const std::string& tmp) {
      std::ofstream(tmp) << "half a check";
      throw std::runtime_error("disk full");
    });
    FAIL() << "the writer's failure was swallowed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("disk full"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(path), "the last good checkpoint");
  EXPECT_EQ(entries(), std::vector<std::string>{"latest.pt"});
}

TEST_F(AtomicFile, AWriterThatCreatesNoFileIsAnError) {
  const auto path = dir_ / "result.json";
  EXPECT_THROW(write_atomically(path.string(), [](const std::string&) {}), std::runtime_error);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(AtomicFile, AnImpossibleDirectoryIsNamed) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "a-file") << "x";
  const auto path = dir_ / "a-file" / "inside.json";  // a file cannot hold files
  try {
    write_file_atomically(path.string(), "x");
    FAIL() << "wrote below a regular file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "a-file").string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tula::common
