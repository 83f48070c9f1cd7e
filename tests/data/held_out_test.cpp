// A validation split carved from the training set: disjoint, complete, fixed
// by its own seed, and refused when it does not fit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "data/held_out.hpp"
#include "data/in_memory_dataset.hpp"

namespace tula::data {
namespace {

// 100 one-pixel images whose pixel value is the sample's index, so a gathered
// batch says which samples it holds.
std::shared_ptr<Dataset> numbered(int64_t n = 100) {
  auto images = torch::arange(n, torch::kUInt8).reshape({n, 1, 1, 1});
  auto labels = torch::arange(n, torch::kInt64) % 10;
  return std::make_shared<InMemoryDataset>("numbered", images, labels, 10);
}

std::set<int64_t> samples_of(const Dataset& d) {
  std::vector<int64_t> all(static_cast<size_t>(d.size()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  const auto batch = d.gather(all);
  std::set<int64_t> ids;
  const auto pixels = (batch.images.flatten() * 255).round().to(torch::kInt64);
  for (int64_t i = 0; i < pixels.size(0); ++i) ids.insert(pixels[i].item<int64_t>());
  return ids;
}

TEST(HoldOut, SplitsIntoDisjointPartsThatCoverTheSet) {
  const auto h = hold_out(numbered(), 20, 0);
  EXPECT_EQ(h.validation->size(), 20);
  EXPECT_EQ(h.train->size(), 80);
  const auto val = samples_of(*h.validation), train = samples_of(*h.train);
  EXPECT_EQ(val.size(), 20u);
  EXPECT_EQ(train.size(), 80u);
  for (const auto id : val) EXPECT_EQ(train.count(id), 0u) << "sample " << id << " is in both";
  EXPECT_EQ(h.validation->num_classes(), 10);
  EXPECT_NE(h.validation->name().find("validation"), std::string::npos);
}

TEST(HoldOut, TheSplitIsFixedByItsSeed) {
  EXPECT_EQ(samples_of(*hold_out(numbered(), 20, 7).validation), samples_of(*hold_out(numbered(), 20, 7).validation));
  EXPECT_NE(samples_of(*hold_out(numbered(), 20, 7).validation), samples_of(*hold_out(numbered(), 20, 8).validation));
}

TEST(HoldOut, ASplitThatDoesNotFitIsRefusedWithTheSizes) {
  for (const int64_t bad : {0, 100, 250}) {
    try {
      hold_out(numbered(), bad, 0);
      FAIL() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("100"), std::string::npos) << e.what();
    }
  }
}

TEST(HoldOut, GatherOutsideTheSubsetIsAnError) {
  const auto h = hold_out(numbered(), 20, 0);
  EXPECT_THROW(h.validation->gather({20}), std::out_of_range);
}

}  // namespace
}  // namespace tula::data
