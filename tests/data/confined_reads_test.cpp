// The data loaders under data roots (a job of `tula serve`): a file or class
// folder of the data set that is a symlink out of the root is refused, naming
// its path, in the process that reads it; without roots links are followed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "common/input_roots.hpp"
#include "data/file_reader.hpp"
#include "data/image_folder_listing.hpp"
#include "data/test_files.hpp"

namespace tula::data {
namespace {

namespace fs = std::filesystem;
using namespace testing;

struct ConfinedSet {
  ConfinedSet() {
    fs::create_directories(root / "set");
    fs::create_directories(outside / "cats");
    write_file((outside / "labels").string(), Bytes{'o'});
    write_file((outside / "cats" / "0.jpg").string(), Bytes{'o'});
    write_file((root / "set" / "inside").string(), Bytes{'i'});
  }
  ~ConfinedSet() { ::unsetenv(common::kDataRootsVariable); }
  void confine() { common::pass_input_roots({root.string()}); }
  TempDir dir{"tula-confined"};
  fs::path root = fs::canonical(dir.path()) / "data", outside = fs::canonical(dir.path()) / "secret";
};

// What `fn` throws, as text ("" for nothing).
template <class Fn>
std::string thrown(Fn fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ConfinedReads, AFileLinkedOutOfTheRootIsRefusedNamingIt) {
  ConfinedSet s;
  fs::create_symlink(s.outside / "labels", s.root / "set" / "labels");
  const std::string link = (s.root / "set" / "labels").string();
  EXPECT_EQ(read_file(link), Bytes{'o'});  // no roots: a user's own run follows it
  s.confine();
  EXPECT_EQ(read_file((s.root / "set" / "inside").string()), Bytes{'i'});
  const std::string read_refusal = thrown([&] { (void)read_file(link); });
  EXPECT_NE(read_refusal.find(link), std::string::npos) << read_refusal;
  EXPECT_NE(read_refusal.find("leads outside"), std::string::npos) << read_refusal;
  const std::string gz_refusal = thrown([&] { GzFile file(link); });
  EXPECT_NE(gz_refusal.find("leads outside"), std::string::npos) << gz_refusal;
}

TEST(ConfinedReads, AClassFolderLinkedOutOfTheRootIsRefusedWhenListed) {
  ConfinedSet s;
  fs::create_directories(s.root / "set" / "dogs");
  write_file((s.root / "set" / "dogs" / "0.jpg").string(), Bytes{'i'});
  fs::create_symlink(s.outside / "cats", s.root / "set" / "cats");
  const std::string set = (s.root / "set").string();
  EXPECT_EQ(list_image_folder(set, Split::kTrain, 0.5, 0).classes.size(), 2u);  // no roots
  s.confine();
  const std::string refusal = thrown([&] { (void)list_image_folder(set, Split::kTrain, 0.5, 0); });
  EXPECT_NE(refusal.find((s.root / "set" / "cats").string()), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("leads outside"), std::string::npos) << refusal;
}

}  // namespace
}  // namespace tula::data
