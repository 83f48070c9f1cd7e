// `tula train --dataset imagefolder` as a user runs it: a small folder of
// JPEG and PNG files written by the test, one of them broken; the layouts a
// user gets wrong, each refused before training with the path named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/image_files.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::cli {
namespace {

namespace fs = std::filesystem;
using data::testing::JpegSpec;
using data::testing::PngSpec;
using tula::testing::expect_tula_fails;
using tula::testing::run_command;
using tula::testing::tula_binary;
using TempDir = tula::testing::TempDir;

// Class `c`'s images are a flat colour of their own, so the classes are learnable.
std::vector<uint8_t> colour_of(int c) { return {static_cast<uint8_t>(40 + 100 * c), 90, static_cast<uint8_t>(200 - 80 * c)}; }

void write_class(const fs::path& dir, int c, int images) {
  fs::create_directories(dir);
  for (int i = 0; i < images; ++i) {
    const auto name = (dir / ("img" + std::to_string(i))).string();
    if (i % 2 == 0) {
      data::testing::write_jpeg(name + ".jpg", JpegSpec{}, data::testing::flat(colour_of(c)));
    } else {
      data::testing::write_png(name + ".png", PngSpec{}, data::testing::flat(colour_of(c)));
    }
  }
}

// DIR/train/{a,b} and DIR/val/{a,b}.
fs::path folder_with_splits(const TempDir& tmp) {
  const fs::path root = tmp.path() / "photos";
  for (const char* split : {"train", "val"}) {
    write_class(root / split / "a", 0, 8);
    write_class(root / split / "b", 1, 8);
  }
  return root;
}

std::vector<nlohmann::json> records(const fs::path& metrics) {
  std::vector<nlohmann::json> out;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string train(const fs::path& root, const fs::path& metrics, const std::string& extra = "") {
  return tula_binary() + " train --model small_cnn --dataset imagefolder --data-dir " + root.string() +
         " --image-size 16 --epochs 1 --batch-size 4 --progress none --metrics " + metrics.string() + " " + extra;
}

TEST(ImageFolderTrain, TrainsOnAFolderAndSkipsABrokenFileNamingIt) {
  TempDir tmp;
  const fs::path root = folder_with_splits(tmp);
  {
    std::ofstream broken(root / "train" / "b" / "broken.jpg", std::ios::binary);
    broken << "\xFF\xD8\xFF\xE0 not really a JPEG";
  }
  const fs::path metrics = tmp.path() / "m.jsonl";
  const auto r = run_command(train(root, metrics), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("broken.jpg"), std::string::npos) << "the warning names the file:\n" << r.output;
  const auto rows = records(metrics);
  ASSERT_FALSE(rows.empty());
  const auto& start = rows.front();
  EXPECT_EQ(start["type"], "start");
  EXPECT_EQ(start["train_samples"], 17) << "16 images and the broken one, whose place another takes";
  EXPECT_EQ(start["data_source"]["layout"], "train/ and val/");
  EXPECT_EQ(start["data_source"]["classes"], 2);
  EXPECT_EQ(start["data_source"]["image_size"], 16);
  bool epoch_seen = false;
  for (const auto& row : rows) {
    if (row["type"] != "epoch") continue;
    epoch_seen = true;
    EXPECT_EQ(row["bad_images"], 1) << row.dump();
  }
  EXPECT_TRUE(epoch_seen);
}

// The profile times the loader training will use on the folder: its decode
// threads, alone and feeding steps, and says what bounds a step.
TEST(ImageFolderTrain, TheProfileTimesTheFoldersLoaderAndSaysWhatBoundsAStep) {
  TempDir tmp;
  const fs::path root = folder_with_splits(tmp);
  const fs::path out = tmp.path() / "p.json";
  const auto r = run_command(tula_binary() + " profile --quick --model small_cnn --dataset imagefolder --data-dir " +
                                 root.string() + " --image-size 16 --batch-sizes 2,8,32 --workers 2 --decode-threads 1" +
                                 " --out " + out.string(),
                             300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const bool says = r.output.find("input-bound") != std::string::npos ||
                    r.output.find("compute-bound") != std::string::npos;
  EXPECT_TRUE(says) << "the profile says which bounds a step:\n" << r.output;
  std::ifstream in(out);
  const auto profile = nlohmann::json::parse(in);
  const auto& loader = profile["samples"]["loader"];
  ASSERT_EQ(loader.size(), 1u) << profile["samples"].dump();
  EXPECT_EQ(loader[0]["threads"], 1) << "--decode-threads 1, as training would decode";
  EXPECT_EQ(loader[0]["batch"], 8) << "the grid's middle batch";
  for (const auto& s : loader[0]["seconds"]) EXPECT_GT(s.get<double>(), 0);
  EXPECT_FALSE(profile["samples"]["input_steps"][0]["step_s"].empty());
  EXPECT_TRUE(profile["fitted"]["input"]["measured"].get<bool>());
  EXPECT_NE(profile["measurement"]["input"].get<std::string>().find("decoded on 1 thread"), std::string::npos);
  // What --cache-decoded would hold, measured, and whether the set fits.
  EXPECT_GT(profile["data"]["decoded_bytes_per_sample"].get<double>(), 0);
  EXPECT_NE(r.output.find("--cache-decoded: the 16 training images take"), std::string::npos) << r.output;
}

TEST(ImageFolderTrain, ABrokenFileStopsTheRunWhenAskedTo) {
  TempDir tmp;
  const fs::path root = folder_with_splits(tmp);
  std::ofstream(root / "train" / "a" / "zz-truncated.png", std::ios::binary) << "\x89PNG\r\n\x1a\n";
  expect_tula_fails(train(root, tmp.path() / "m.jsonl", "--on-bad-image fail").substr(tula_binary().size() + 1),
                    "zz-truncated.png", 300);
}

TEST(ImageFolderTrain, AFolderWithoutSplitsHoldsOutATestSplitItRecords) {
  TempDir tmp;
  const fs::path root = tmp.path() / "caltech";
  write_class(root / "a", 0, 10);
  write_class(root / "b", 1, 10);
  const fs::path metrics = tmp.path() / "m.jsonl";
  const auto r = run_command(train(root, metrics, "--validation-seed 7"), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto start = records(metrics).front();
  EXPECT_EQ(start["data_source"]["layout"], "one folder, test split held out");
  EXPECT_EQ(start["data_source"]["split_seed"], 7);
  EXPECT_EQ(start["train_samples"].get<int>() + start["evaluation_samples"].get<int>(), 20);
  EXPECT_EQ(start["evaluation_samples"], 4) << "a fifth of each class";
}

TEST(ImageFolderTrain, LayoutsThatCannotTrainAreRefusedNamingThePath) {
  TempDir tmp;
  const std::string args = " --dataset imagefolder --image-size 16 --epochs 1 --progress none";
  // No directory at all.
  expect_tula_fails("train --data-dir " + tmp.str() + "/missing" + args, tmp.str() + "/missing");
  // A folder of files, no class folders.
  fs::create_directories(tmp.path() / "flat");
  data::testing::write_png((tmp.path() / "flat" / "x.png").string(), PngSpec{}, data::testing::flat({1, 2, 3}));
  expect_tula_fails("train --data-dir " + tmp.str() + "/flat" + args, tmp.str() + "/flat");
  // A class folder with no image.
  const fs::path empty_class = tmp.path() / "empty";
  write_class(empty_class / "train" / "a", 0, 2);
  fs::create_directories(empty_class / "train" / "b");
  write_class(empty_class / "val" / "a", 0, 2);
  write_class(empty_class / "val" / "b", 1, 2);
  expect_tula_fails("train --data-dir " + empty_class.string() + args, (empty_class / "train" / "b").string());
  // Classes that differ between train/ and val/.
  const fs::path differ = tmp.path() / "differ";
  write_class(differ / "train" / "a", 0, 2);
  write_class(differ / "train" / "b", 1, 2);
  write_class(differ / "val" / "a", 0, 2);
  write_class(differ / "val" / "c", 1, 2);
  expect_tula_fails("train --data-dir " + differ.string() + args, differ.string());
  // No --data-dir.
  expect_tula_fails("train" + args, "imagefolder");
  // Options out of range.
  expect_tula_fails("train --data-dir " + differ.string() + args + " --eval-crop 1.5", "--eval-crop");
  expect_tula_fails("train --data-dir " + differ.string() + args + " --image-channels 2", "--image-channels");
  expect_tula_fails("train --data-dir " + differ.string() + args + " --on-bad-image ignore", "ignore");
}

}  // namespace
}  // namespace tula::cli
