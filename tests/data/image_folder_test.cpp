// The image folder data set end to end on small files written here: labels
// and pixels of every sample, training crops repeatable from their seed
// (through the loader too), bad files skipped or refused, nothing cached,
// and the normalization statistics.
#include "data/image_folder.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "data/decode_pool.hpp"
#include "data/image_files.hpp"
#include "data/loader.hpp"
#include "common/remove_tree.hpp"

namespace tula::data {
namespace {

using namespace testing;

// Image i of class c is flat (40 c + 10, 8 i + 20, 100): its decoded colour
// says which file a sample came from.
std::vector<uint8_t> colour_of(int c, int i) {
  return {static_cast<uint8_t>(40 * c + 10), static_cast<uint8_t>(8 * i + 20), 100};
}

void write_class(const TempDir& dir, const std::string& folder, int c, int count) {
  for (int i = 0; i < count; ++i) write_jpeg(dir.file(folder + "/" + std::to_string(i) + ".jpg"), {}, flat(colour_of(c, i)));
}

// (class, image) of sample k, read back from its colour.
std::pair<int, int> which(const Batch& batch, int64_t k) {
  const auto mean = batch.images[k].mean({1, 2});
  const double r = mean[0].item<double>() * 255, g = mean[1].item<double>() * 255;
  return {static_cast<int>(std::lround((r - 10) / 40)), static_cast<int>(std::lround((g - 20) / 8))};
}

DatasetOptions options_for(const TempDir& dir, int64_t size = 16) {
  DatasetOptions o;
  o.name = "imagefolder";
  o.data_dir = dir.str();
  o.image_folder.image_size = size;
  o.image_folder.decode_threads = 2;
  o.image_folder.idle_priority = false;  // a loaded test machine would starve idle threads
  return o;
}

std::vector<int64_t> all_of(const Dataset& d) {
  std::vector<int64_t> v(static_cast<size_t>(d.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
  return v;
}

// Collects what spdlog logs while it lives.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream text_;
};

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ImageFolder, OpensByNameWithTheShapeAndClassesOfItsFolders) {
  const TempDir dir("tula-images");
  for (int c = 0; c < 3; ++c) {
    write_class(dir, "train/class" + std::to_string(c), c, 4);
    write_class(dir, "val/class" + std::to_string(c), c, 2);
  }
  auto o = options_for(dir);
  o.name = "Image_Folder";
  const auto train = open_dataset(o, Split::kTrain);
  const auto test = open_dataset(o, Split::kTest);
  EXPECT_EQ(train->size(), 12);
  EXPECT_EQ(test->size(), 6);
  EXPECT_EQ(train->num_classes(), 3);
  EXPECT_EQ(train->shape().channels, 3);
  EXPECT_EQ(train->shape().height, 16);
  EXPECT_EQ(train->shape().width, 16);
  EXPECT_EQ(default_data_dir("imagefolder"), "");
  EXPECT_EQ(train->channel_mean(), (std::vector<double>{0.485, 0.456, 0.406}));
  EXPECT_EQ(train->channel_std(), (std::vector<double>{0.229, 0.224, 0.225}));
}

TEST(ImageFolder, EverySampleIsItsFilesPixelsWithItsClassLabel) {
  const TempDir dir("tula-images");
  for (int c = 0; c < 3; ++c) write_class(dir, "c" + std::to_string(c), c, 5);
  const auto train = open_image_folder(options_for(dir), Split::kTrain);
  const auto batch = train->gather(all_of(*train));
  ASSERT_EQ(batch.images.sizes(), (std::vector<int64_t>{train->size(), 3, 16, 16}));
  for (int64_t k = 0; k < train->size(); ++k) {
    const auto [c, i] = which(batch, k);
    EXPECT_EQ(batch.labels[k].item<int64_t>(), c);
    const auto& path = train->listing().files[static_cast<size_t>(k)];
    EXPECT_NE(path.find("/c" + std::to_string(c) + "/" + std::to_string(i) + ".jpg"), std::string::npos) << path;
  }
  EXPECT_GE(batch.images.min().item<float>(), 0.0f);
  EXPECT_LE(batch.images.max().item<float>(), 1.0f);
  EXPECT_EQ(train->bad_images(), 0);
}

// A horizontal ramp, so a crop's position and flip show in its pixels.
void write_ramps(const TempDir& dir, int count) {
  for (int i = 0; i < count; ++i) {
    PngSpec spec;
    spec.width = 64;
    spec.height = 48;
    write_png(dir.file("ramp/" + std::to_string(i) + ".png"), spec, [i](int x, int y) {
      return std::vector<uint8_t>{static_cast<uint8_t>(3 * x + i), static_cast<uint8_t>(4 * y), 50};
    });
  }
}

TEST(ImageFolder, TrainingCropsAreAPureFunctionOfTheSeed) {
  const TempDir dir("tula-images");
  write_ramps(dir, 8);
  auto o = options_for(dir);
  o.image_folder.held_out_fraction = 0.25;
  const auto train = open_image_folder(o, Split::kTrain);
  ASSERT_TRUE(train->augments());
  const auto indices = all_of(*train);
  const auto a = train->gather_seeded(indices, 7).images;
  EXPECT_TRUE(torch::equal(a, train->gather_seeded(indices, 7).images));
  EXPECT_FALSE(torch::equal(a, train->gather_seeded(indices, 8).images));
  // Alone or among others, a sample gets the same crop.
  EXPECT_TRUE(torch::equal(a[2], train->gather_seeded({indices[2]}, 7).images[0]));
  // Without a seed, no augmentation: the evaluation transform.
  EXPECT_TRUE(torch::equal(train->gather(indices).images, train->gather(indices).images));
  EXPECT_FALSE(torch::equal(a, train->gather(indices).images));
}

// The bytes a device normalizes are the same crops as the floats, each value
// the nearest byte to the float's (half a step at most), never normalized on
// decode; a whole-valued float (a flat area) is its byte exactly.
TEST(ImageFolder, BytesAreTheSameCropsRoundedToTheNearestByte) {
  const TempDir dir("tula-images");
  write_ramps(dir, 8);
  auto o = options_for(dir);
  o.image_folder.held_out_fraction = 0.25;
  const auto train = open_image_folder(o, Split::kTrain);
  const auto indices = all_of(*train);
  const auto floats = train->gather_seeded(indices, 7);
  const auto bytes = train->gather_bytes(indices, 7);
  ASSERT_EQ(bytes.images.scalar_type(), torch::kUInt8);
  ASSERT_EQ(bytes.images.sizes(), floats.images.sizes());
  EXPECT_TRUE(torch::equal(bytes.labels, floats.labels));
  const auto gap = (bytes.images.to(torch::kFloat32) - floats.images * 255).abs();
  EXPECT_LE(gap.max().item<float>(), 0.5f + 1e-3f);
  // The blue channel is 50 everywhere: exact.
  EXPECT_TRUE(torch::all(bytes.images.select(1, 2) == 50).item<bool>());
  // Another seed, other crops, as for floats.
  EXPECT_FALSE(torch::equal(bytes.images, train->gather_bytes(indices, 8).images));
  // Normalizing on decode changes the floats, not the bytes.
  train->normalize_on_decode({0.5, 0.5, 0.5}, {0.25, 0.25, 0.25});
  EXPECT_TRUE(torch::equal(bytes.images, train->gather_bytes(indices, 7).images));
  EXPECT_FALSE(torch::equal(floats.images, train->gather_seeded(indices, 7).images));
}

TEST(ImageFolder, HalfTheTrainingSamplesAreFlipped) {
  const TempDir dir("tula-images");
  write_ramps(dir, 1);
  // A class of one image holds none out: it is the whole training split.
  const auto train = open_image_folder(options_for(dir), Split::kTrain);
  ASSERT_EQ(train->size(), 1);
  int flipped = 0, draws = 64;
  for (int s = 0; s < draws; ++s) {
    const auto red = train->gather_seeded({0}, static_cast<uint64_t>(s)).images[0][0][8];
    flipped += red[0].item<float>() > red[15].item<float>() ? 1 : 0;
  }
  EXPECT_GT(flipped, draws / 4);
  EXPECT_LT(flipped, draws * 3 / 4);
}

TEST(ImageFolder, TheTestSplitNeverAugments) {
  const TempDir dir("tula-images");
  write_ramps(dir, 8);
  const auto test = open_image_folder(options_for(dir), Split::kTest);
  EXPECT_FALSE(test->augments());
  const auto indices = all_of(*test);
  EXPECT_TRUE(torch::equal(test->gather_seeded(indices, 1).images, test->gather(indices).images));
}

TEST(ImageFolder, TheLoaderRepeatsItsCropsAndResumesMidEpochOnTheSameOnes) {
  const TempDir dir("tula-images");
  write_ramps(dir, 8);
  auto o = options_for(dir);
  o.image_folder.held_out_fraction = 0.25;
  const std::shared_ptr<const Dataset> train = open_image_folder(o, Split::kTrain);
  LoaderOptions lo;
  lo.batch_size = 2;
  lo.seed = 42;
  lo.idle_priority = false;
  const auto run = [&](int64_t start) {
    auto l = lo;
    l.start_batch = start;
    PrefetchLoader loader(train, all_of(*train), l);
    std::vector<torch::Tensor> out;
    while (auto b = loader.next()) out.push_back(b->images);
    return out;
  };
  const auto first = run(0), again = run(0), resumed = run(1);
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(resumed.size(), 2u);
  for (size_t b = 0; b < first.size(); ++b) EXPECT_TRUE(torch::equal(first[b], again[b])) << "batch " << b;
  EXPECT_TRUE(torch::equal(first[1], resumed[0]));
  EXPECT_TRUE(torch::equal(first[2], resumed[1]));
}

TEST(ImageFolder, BadFilesAreSkippedWithOneWarningEachAndCounted) {
  const TempDir dir("tula-images");
  write_class(dir, "train/a", 0, 4);
  write_class(dir, "train/b", 1, 2);
  write_class(dir, "val/a", 0, 1);
  write_class(dir, "val/b", 1, 1);
  const auto truncated = dir.file("train/a/1.jpg"), text = dir.file("train/a/3.jpg");
  auto bytes = read_file_bytes(truncated);
  bytes.resize(bytes.size() / 2);
  write_file(truncated, bytes);
  write_file(text, Bytes{'n', 'o', 't', '\n'});
  const LogCapture log;
  const auto train = open_image_folder(options_for(dir), Split::kTrain);
  for (int epoch = 0; epoch < 2; ++epoch) {
    const auto batch = train->gather(all_of(*train));
    ASSERT_EQ(batch.images.size(0), 6);
    for (int64_t k = 0; k < train->size(); ++k) EXPECT_EQ(batch.labels[k].item<int64_t>(), which(batch, k).first);
  }
  EXPECT_EQ(train->bad_images(), 2);
  EXPECT_EQ(count_of(log.text(), truncated), 1u) << log.text();
  EXPECT_EQ(count_of(log.text(), text), 1u) << log.text();
}

TEST(ImageFolder, TheNextGoodFileIsTheNextInPathOrderWrappingAround) {
  const TempDir dir("tula-images");
  write_class(dir, "train/a", 0, 4);
  write_class(dir, "val/a", 0, 1);
  write_file(dir.file("train/a/1.jpg"), Bytes{'x'});
  write_file(dir.file("train/a/3.jpg"), Bytes{});
  const LogCapture log;
  const auto train = open_image_folder(options_for(dir), Split::kTrain);
  const auto batch = train->gather({0, 1, 2, 3});
  EXPECT_EQ(which(batch, 0).second, 0);
  EXPECT_EQ(which(batch, 1).second, 2);  // 1 is bad: 2 takes its place
  EXPECT_EQ(which(batch, 2).second, 2);
  EXPECT_EQ(which(batch, 3).second, 0);  // 3 is bad: wraps to 0
  EXPECT_EQ(train->bad_images(), 2);
  EXPECT_NE(log.text().find(dir.file("train/a/1.jpg")), std::string::npos) << log.text();
  EXPECT_NE(log.text().find("empty file"), std::string::npos) << log.text();
}

TEST(ImageFolder, ABadFileFailsNamingItWhenAsked) {
  const TempDir dir("tula-images");
  write_class(dir, "train/a", 0, 3);
  write_class(dir, "val/a", 0, 1);
  write_file(dir.file("train/a/1.jpg"), Bytes{'x', 'y'});
  auto o = options_for(dir);
  o.image_folder.on_bad_image = OnBadImage::kFail;
  const auto train = open_image_folder(o, Split::kTrain);
  EXPECT_NO_THROW(train->gather({0, 2}));
  expect_error([&] { train->gather({0, 1, 2}); }, {dir.file("train/a/1.jpg"), "neither a JPEG nor a PNG"});
  std::filesystem::remove(dir.file("train/a/2.jpg"));
  expect_error([&] { train->gather({2}); }, {dir.file("train/a/2.jpg"), "missing"});
}

TEST(ImageFolder, AClassWithNoGoodFileLeftIsAnError) {
  const TempDir dir("tula-images");
  write_class(dir, "train/a", 0, 2);
  write_class(dir, "val/a", 0, 1);
  write_file(dir.file("train/a/0.jpg"), Bytes{'x'});
  write_file(dir.file("train/a/1.jpg"), Bytes{'y'});
  const LogCapture log;
  const auto train = open_image_folder(options_for(dir), Split::kTrain);
  expect_error([&] { train->gather({1}); }, {dir.file("train/a"), "no decodable image"});
}

TEST(ImageFolder, NothingIsCachedEachGatherReadsTheFileAgain) {
  const TempDir dir("tula-images");
  write_class(dir, "train/a", 0, 2);
  write_class(dir, "val/a", 0, 1);
  const auto train = open_image_folder(options_for(dir), Split::kTrain);
  EXPECT_EQ(which(train->gather({0}), 0).second, 0);
  write_jpeg(dir.file("train/a/0.jpg"), {}, flat(colour_of(0, 9)));
  EXPECT_EQ(which(train->gather({0}), 0).second, 9);
}

TEST(ImageFolder, OneChannelStatisticsAreMeasuredOnTheFiles) {
  const TempDir dir("tula-images");
  for (int i = 0; i < 4; ++i) {
    PngSpec gray;
    gray.format = PNG_FORMAT_GRAY;
    write_png(dir.file("dark/" + std::to_string(i) + ".png"), gray, flat({50}));
    write_png(dir.file("light/" + std::to_string(i) + ".png"), gray, flat({200}));
  }
  auto o = options_for(dir);
  o.image_folder.channels = 1;
  const auto train = open_image_folder(o, Split::kTrain);  // 3 of each class
  ASSERT_EQ(train->shape().channels, 1);
  ASSERT_EQ(train->channel_mean().size(), 1u);
  EXPECT_NEAR(train->channel_mean()[0], 125.0 / 255.0, 1e-5);
  EXPECT_NEAR(train->channel_std()[0], 75.0 / 255.0, 1e-5);
}

TEST(ImageFolder, OptionsOutOfRangeAreRefused) {
  const TempDir dir("tula-images");
  write_class(dir, "a", 0, 2);
  for (const auto& change : std::vector<std::function<void(ImageFolderOptions&)>>{
           [](auto& f) { f.channels = 2; }, [](auto& f) { f.image_size = -1; }, [](auto& f) { f.decode_threads = -1; }}) {
    auto o = options_for(dir);
    change(o.image_folder);
    EXPECT_THROW(open_image_folder(o, Split::kTrain), std::invalid_argument);
  }
  EXPECT_EQ(parse_on_bad_image("skip"), OnBadImage::kSkip);
  EXPECT_EQ(parse_on_bad_image("fail"), OnBadImage::kFail);
  expect_error<std::invalid_argument>([] { parse_on_bad_image("ignore"); }, {"ignore", "skip, fail"});
}

TEST(ImageFolder, DefaultsAreTheUsualSizeAndAFewThreads) {
  const TempDir dir("tula-images");
  write_class(dir, "a", 0, 2);
  auto o = options_for(dir);
  o.image_folder.image_size = 0;
  o.image_folder.decode_threads = 0;
  const auto train = open_image_folder(o, Split::kTrain);
  EXPECT_EQ(train->shape().height, kDefaultImageSize);
  EXPECT_EQ(train->decode_threads(), default_decode_threads());
  EXPECT_LE(default_decode_threads(), 4);
}

}  // namespace
}  // namespace tula::data

namespace tula::data {
namespace {

// Two classes of `per_class` training images and one test image each, opened
// with a decoded-image cache of `budget` bytes.
DatasetOptions cached_folder(const TempDir& dir, int per_class, int64_t budget) {
  write_class(dir, "train/a", 0, per_class);
  write_class(dir, "train/b", 1, per_class);
  write_class(dir, "val/a", 0, 1);
  write_class(dir, "val/b", 1, 1);
  auto o = options_for(dir);
  o.image_folder.cache_decoded = true;
  o.image_folder.cache_budget_bytes = budget;
  return o;
}

TEST(ImageFolderCache, DecodedImagesAreKeptAndSamplesCutFromThem) {
  TempDir dir;
  auto o = cached_folder(dir, 4, 64 << 20);
  const auto set = open_image_folder(o, Split::kTrain);
  const auto indices = all_of(*set);
  const Batch first = set->gather_seeded(indices, 5);
  EXPECT_GT(set->cached_bytes(), 0);
  // The files gone, the samples still come, from memory, with the same crops.
  common::remove_tree(dir.path() / "train");
  const Batch again = set->gather_seeded(indices, 5);
  EXPECT_EQ(set->bad_images(), 0);
  EXPECT_TRUE(torch::allclose(again.images, first.images, 1e-6, 1e-6));
  EXPECT_TRUE(again.labels.equal(first.labels));
  for (int64_t k = 0; k < again.labels.size(0); ++k) {
    EXPECT_EQ(which(again, k).first, again.labels[k].item<int64_t>()) << "sample " << k << " is its class's colour";
  }
}

TEST(ImageFolderCache, NothingIsKeptBeyondTheBudget) {
  TempDir dir;
  auto o = cached_folder(dir, 2, 100);  // less than one 40 x 30 image
  const auto set = open_image_folder(o, Split::kTrain);
  const Batch batch = set->gather(all_of(*set));
  EXPECT_EQ(batch.images.size(0), 4);
  EXPECT_EQ(set->cached_bytes(), 0);
}

}  // namespace
}  // namespace tula::data
