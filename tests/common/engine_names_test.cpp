// The engine's names as the LibTorch-free parts know them (the zoo's list is
// held to the zoo itself by tests/models/zoo_test.cpp).
#include "common/engine_names.hpp"

#include <gtest/gtest.h>

namespace tula::common {
namespace {

TEST(EngineNames, DataSetsAreKnownByTheSpellingsPeopleType) {
  EXPECT_EQ(canonical_dataset_name("Fashion-MNIST"), "fashion-mnist");
  EXPECT_EQ(canonical_dataset_name("fashion_mnist"), "fashion-mnist");
  EXPECT_EQ(canonical_dataset_name("fmnist"), "fashion-mnist");
  EXPECT_EQ(canonical_dataset_name("CIFAR-10"), "cifar10");
  EXPECT_EQ(canonical_dataset_name("cifar100"), "cifar100");
  EXPECT_EQ(canonical_dataset_name("synthetic"), "synthetic");
  EXPECT_EQ(canonical_dataset_name("ImageFolder"), "imagefolder");
  EXPECT_EQ(canonical_dataset_name("image_folder"), "imagefolder");
  EXPECT_EQ(canonical_dataset_name("imagenet"), "");
  EXPECT_EQ(canonical_dataset_name(""), "");
  for (const auto& name : dataset_names()) EXPECT_EQ(canonical_dataset_name(name), name);
}

TEST(EngineNames, TheZooIsListedOnce) {
  EXPECT_TRUE(is_zoo_model("small_cnn"));
  EXPECT_TRUE(is_zoo_model("mobilenet_v3_large"));
  EXPECT_FALSE(is_zoo_model("resnet1000"));
  EXPECT_FALSE(is_zoo_model(""));
  EXPECT_EQ(join_names({"a", "b"}), "a, b");
}

}  // namespace
}  // namespace tula::common
