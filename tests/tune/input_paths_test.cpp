// What a tune job reads, looked up right before each use: with data roots
// (as the service starts tune) a path that leads outside them since it was
// accepted fails the job, naming the path, before anything reads it.
#include "tune/input_paths.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "helpers/expect_error.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/runner.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;

struct Roots {
  Roots() {
    fs::create_directories(root / "mnist");
    fs::create_directories(outside);
    std::ofstream(root / "catalog.json") << "{}";
    std::ofstream(outside / "catalog.json") << "secret";
    options.job.data_roots = {root.string()};
  }
  // Points root/NAME at `target`, replacing what was there.
  void link(const std::string& name, const fs::path& target) const {
    fs::remove(root / name);
    fs::create_symlink(target, root / name);
  }
  testing::TempDir dir;
  fs::path root = dir.path() / "data", outside = dir.path() / "secret";
  TuneOptions options;
};

TEST(InputPaths, AFileUnderTheRootsIsReadAndOneLeadingOutsideIsNot) {
  Roots r;
  EXPECT_EQ(read_input_file(r.options, "--resources", (r.root / "catalog.json").string()), "{}");
  r.link("linked.json", r.root / "catalog.json");
  EXPECT_EQ(read_input_file(r.options, "--resources", (r.root / "linked.json").string()), "{}");
  r.link("linked.json", r.outside / "catalog.json");
  expect_error<std::invalid_argument>(
      [&] { read_input_file(r.options, "--resources", (r.root / "linked.json").string()); },
      {"--resources '" + (r.root / "linked.json").string() + "' leads to " + (r.outside / "catalog.json").string(),
       "outside the data roots", "nothing was opened"});
}

TEST(InputPaths, AFifoInPlaceOfAFileIsRefusedWithoutWaiting) {
  Roots r;
  ASSERT_EQ(::mkfifo((r.root / "fifo.json").c_str(), 0600), 0);
  expect_error<std::invalid_argument>([&] { read_input_file(r.options, "--profile", (r.root / "fifo.json").string()); },
                                      {"not a regular file"});
}

TEST(InputPaths, TheDataDirectoryIsHandedOnResolved) {
  Roots r;
  r.link("current", r.root / "mnist");
  EXPECT_EQ(input_directory(r.options, "--data-dir", (r.root / "current").string()), (r.root / "mnist").string());
  r.link("current", r.outside);
  expect_error<std::invalid_argument>([&] { input_directory(r.options, "--data-dir", (r.root / "current").string()); },
                                      {"--data-dir '" + (r.root / "current").string() + "' leads to"});
  TuneOptions unconfined;
  EXPECT_EQ(input_directory(unconfined, "--data-dir", r.outside.string()), r.outside.string()) << "no roots: as given";
}

// A job's children run in its directory (--out), so a relative --data-dir
// handed on as typed would name a folder under it.
TEST(InputPaths, ARelativeDataDirectoryIsHandedOnAbsolute) {
  Roots r;
  const fs::path was = fs::current_path();
  fs::current_path(r.dir.path());
  const std::string handed = input_directory(TuneOptions{}, "--data-dir", "data/mnist");
  const fs::path expected = fs::current_path() / "data" / "mnist";
  fs::current_path(was);
  EXPECT_EQ(handed, expected.string());
}

TEST(InputPaths, ATuneJobWhoseDataDirLeadsOutsideFailsBeforeItStartsAnything) {
  Roots r;
  r.link("mnist-link", r.outside);
  const fs::path started = r.dir.path() / "started";
  const fs::path tula = r.dir.path() / "fake-tula";
  std::ofstream(tula) << "#!/bin/sh\ntouch '" << started.string() << "'\nexit 1\n";
  fs::permissions(tula, fs::perms::owner_all);
  TuneOptions o = r.options;
  o.job.model = "small_cnn";
  o.job.dataset = "mnist";
  o.job.epochs = 1;
  o.job.data_dir = (r.root / "mnist-link").string();
  o.job.out_dir = (r.dir.path() / "job").string();
  o.progress = "none";
  bool profiled = false;
  const TuneResult result =
      run_tune(o, tula.string(), [&profiled](const std::vector<std::string>&, const auto&) { profiled = true; });
  EXPECT_EQ(result.state, records::TuneOutcome::Failed);
  EXPECT_NE(result.reason.find("--data-dir '" + o.job.data_dir + "' leads to " + r.outside.string()), std::string::npos)
      << result.reason;
  EXPECT_FALSE(fs::exists(started)) << "a child process was started";
  EXPECT_FALSE(profiled) << "the profile was started";
}

}  // namespace
}  // namespace tula::tune
