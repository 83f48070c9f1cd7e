// Finding an image folder's files: class order, file order, both layouts,
// the drawn split, and every layout that is refused, with the path it names.
#include "data/image_folder_listing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data/test_files.hpp"

namespace tula::data {
namespace {

using namespace testing;

// The listing reads names only, so the files need not be images.
void touch(const TempDir& dir, const std::string& relative) { write_file(dir.file(relative), Bytes{'x'}); }

void touch_class(const TempDir& dir, const std::string& folder, int count) {
  for (int i = 0; i < count; ++i) touch(dir, folder + "/" + std::to_string(i) + ".jpg");
}

std::set<std::string> all_files(const ImageFolderListing& a, const ImageFolderListing& b) {
  std::set<std::string> files(a.files.begin(), a.files.end());
  files.insert(b.files.begin(), b.files.end());
  return files;
}

TEST(ImageFolderListing, ClassesAreTheFolderNamesInByteOrder) {
  const TempDir dir("tula-folder");
  for (const std::string c : {"dog", "Cat", "ant", "a b"}) {
    touch_class(dir, "train/" + c, 1);
    touch_class(dir, "val/" + c, 1);
  }
  const auto listing = list_image_folder(dir.str(), Split::kTrain, 0.2, 0);
  EXPECT_EQ(listing.classes, (std::vector<std::string>{"Cat", "a b", "ant", "dog"}));
  EXPECT_EQ(listing.root, dir.file("train"));
  EXPECT_FALSE(listing.held_out);
  EXPECT_EQ(listing.label_of(3), 3);
  EXPECT_EQ(list_image_folder(dir.str(), Split::kTest, 0.2, 0).root, dir.file("val"));
}

TEST(ImageFolderListing, FilesAreImagesInPathOrderWhateverTheirExtensionsCase) {
  const TempDir dir("tula-folder");
  for (const std::string f : {"b.JPG", "a.png", "c.Jpeg", "notes.txt", ".hidden.jpg", "sub/a.jpg", "z.gif",
                              ".cache/x.jpg"}) {
    touch(dir, "train/k/" + f);
  }
  touch(dir, "train/j/1.jpeg");
  touch_class(dir, "val/j", 1);
  touch_class(dir, "val/k", 1);
  const auto listing = list_image_folder(dir.str(), Split::kTrain, 0.2, 0);
  const std::string k = dir.file("train/k/");
  EXPECT_EQ(listing.files,
            (std::vector<std::string>{dir.file("train/j/1.jpeg"), k + "a.png", k + "b.JPG", k + "c.Jpeg", k + "sub/a.jpg"}));
  EXPECT_EQ(listing.class_begin, (std::vector<int64_t>{0, 1, 5}));
  EXPECT_EQ(listing.label_of(0), 0);
  EXPECT_EQ(listing.label_of(1), 1);
  EXPECT_EQ(listing.label_of(4), 1);
}

TEST(ImageFolderListing, OneFolderIsSplitByClassDisjointlyAndCompletely) {
  const TempDir dir("tula-folder");
  touch_class(dir, "x", 10);
  touch_class(dir, "y", 5);
  touch_class(dir, "z", 1);
  const auto train = list_image_folder(dir.str(), Split::kTrain, 0.2, 3);
  const auto test = list_image_folder(dir.str(), Split::kTest, 0.2, 3);
  EXPECT_TRUE(train.held_out);
  EXPECT_EQ(train.split_seed, 3u);
  EXPECT_DOUBLE_EQ(train.held_out_fraction, 0.2);
  EXPECT_EQ(train.classes, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(test.classes, train.classes);
  // 20% of 10 is 2, of 5 is 1; a class of one image keeps it for training.
  EXPECT_EQ(test.class_begin, (std::vector<int64_t>{0, 2, 3, 3}));
  EXPECT_EQ(train.class_begin, (std::vector<int64_t>{0, 8, 12, 13}));
  EXPECT_EQ(all_files(train, test).size(), 16u);  // disjoint and complete
  for (size_t i = 0; i < test.files.size(); ++i) {
    const auto label = test.label_of(static_cast<int64_t>(i));
    EXPECT_NE(test.files[i].find("/" + test.classes[static_cast<size_t>(label)] + "/"), std::string::npos);
  }
}

TEST(ImageFolderListing, TheDrawnSplitIsFixedByItsSeed) {
  const TempDir dir("tula-folder");
  touch_class(dir, "x", 20);
  touch_class(dir, "y", 20);
  const auto test_files = [&](uint64_t seed) { return list_image_folder(dir.str(), Split::kTest, 0.25, seed).files; };
  EXPECT_EQ(test_files(4), test_files(4));
  int differing = 0;
  for (uint64_t seed = 5; seed < 10; ++seed) differing += test_files(seed) != test_files(4) ? 1 : 0;
  EXPECT_GE(differing, 4);
}

TEST(ImageFolderListing, RefusedLayoutsNameTheirPath) {
  const TempDir dir("tula-folder");
  const std::string missing = dir.file("nowhere");
  expect_error([&] { list_image_folder(missing, Split::kTrain, 0.2, 0); }, {missing, "no such directory"});
  expect_error([&] { list_image_folder("", Split::kTrain, 0.2, 0); }, {"no data directory"});

  touch(dir, "flat/a.jpg");
  expect_error([&] { list_image_folder(dir.file("flat"), Split::kTrain, 0.2, 0); },
               {dir.file("flat"), "no class folders"});

  touch_class(dir, "empty/good", 2);
  touch(dir, "empty/bare/notes.txt");
  expect_error([&] { list_image_folder(dir.file("empty"), Split::kTrain, 0.2, 0); },
               {dir.file("empty/bare"), "no .jpg, .jpeg or .png"});

  touch_class(dir, "differ/train/a", 1);
  touch_class(dir, "differ/train/b", 1);
  touch_class(dir, "differ/val/a", 1);
  touch_class(dir, "differ/val/c", 1);
  for (const auto split : {Split::kTrain, Split::kTest}) {
    expect_error([&] { list_image_folder(dir.file("differ"), split, 0.2, 0); },
                 {dir.file("differ/val"), "'b'", "same classes"});
  }

  touch_class(dir, "no_val/train/a", 1);
  expect_error([&] { list_image_folder(dir.file("no_val"), Split::kTrain, 0.2, 0); },
               {dir.file("no_val"), "no val/"});

  touch_class(dir, "fraction/a", 3);
  for (const double bad : {0.0, 1.0, -0.5}) {
    expect_error<std::invalid_argument>([&] { list_image_folder(dir.file("fraction"), Split::kTrain, bad, 0); },
                                        {"fraction"});
  }
}

}  // namespace
}  // namespace tula::data
