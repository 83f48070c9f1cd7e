// The zoo's catalog, its errors, and model sizes against torchvision 0.14.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/engine_names.hpp"
#include "models/zoo.hpp"

namespace tula::models {
namespace {

std::shared_ptr<Net> build(const std::string& name, int64_t channels, int64_t classes, int64_t image_size = 224) {
  return make_model(name, ModelOptions{channels, classes, image_size});
}

// Expects `f` to throw std::invalid_argument whose message contains every one of `parts`.
template <typename F>
void expect_invalid_argument(F f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const auto& part : parts) EXPECT_NE(what.find(part), std::string::npos) << what << " lacks " << part;
  }
}

TEST(ModelCatalog, ListsEveryModelOnceInStableOrder) {
  const auto& catalog = model_catalog();
  std::set<std::string> names;
  for (const auto& info : catalog) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.family.empty());
    EXPECT_FALSE(info.description.empty());
    EXPECT_GE(info.min_image_size, 1);
  }
  for (const char* name : {"small_cnn", "lenet5", "resnet20", "resnet32", "resnet56", "resnet18", "resnet34", "resnet50",
                           "vgg11", "vgg11_bn", "alexnet", "mobilenet_v3_small", "mobilenet_v3_large"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  EXPECT_EQ(&catalog, &model_catalog());
  EXPECT_EQ(catalog.front().name, "small_cnn");
}

// The service checks a job's model against the LibTorch-free list before any
// process starts; a model added here and not there would be refused at submit.
TEST(ModelCatalog, IsTheListTheLibTorchFreePartsCheckNamesWith) {
  std::vector<std::string> names;
  for (const auto& info : model_catalog()) names.push_back(info.name);
  EXPECT_EQ(names, common::zoo_model_names());
}

TEST(ModelCatalog, MinimumImageSizesMatchTorchvisionMetadata) {
  // torchvision's weights metadata "min_size": resnet (1, 1), vgg (32, 32),
  // alexnet (63, 63), mobilenet_v3 (1, 1).
  std::map<std::string, int64_t> min;
  for (const auto& info : model_catalog()) min[info.name] = info.min_image_size;
  EXPECT_EQ(min["resnet18"], 1);
  EXPECT_EQ(min["resnet50"], 1);
  EXPECT_EQ(min["vgg11"], 32);
  EXPECT_EQ(min["vgg11_bn"], 32);
  EXPECT_EQ(min["alexnet"], 63);
  EXPECT_EQ(min["mobilenet_v3_small"], 1);
  EXPECT_EQ(min["mobilenet_v3_large"], 1);
  EXPECT_EQ(min["resnet20"], 1);
  EXPECT_EQ(min["small_cnn"], 4);
  EXPECT_EQ(min["lenet5"], 12);
}

TEST(MakeModel, UnknownNameListsKnownModels) {
  expect_invalid_argument([] { build("resnet19", 3, 10); },
                          {"unknown model 'resnet19'", "resnet18", "small_cnn", "mobilenet_v3_large"});
  expect_invalid_argument([] { build("", 3, 10); }, {"unknown model"});
}

TEST(MakeModel, TooSmallImageNamesModelAndMinimum) {
  expect_invalid_argument([] { build("alexnet", 3, 10, 62); }, {"alexnet", "63x63", "62x62"});
  expect_invalid_argument([] { build("vgg11_bn", 3, 10, 28); }, {"vgg11_bn", "32x32", "28x28"});
  expect_invalid_argument([] { build("small_cnn", 1, 10, 3); }, {"small_cnn", "4x4"});
  expect_invalid_argument([] { build("resnet18", 3, 10, 0); }, {"resnet18", "1x1"});
  EXPECT_NO_THROW(build("small_cnn", 1, 10, 4));
}

TEST(MakeModel, RejectsNonPositiveChannelsOrClasses) {
  expect_invalid_argument([] { build("small_cnn", 0, 10, 28); }, {"small_cnn", "channels"});
  expect_invalid_argument([] { build("resnet20", 3, 0, 32); }, {"resnet20", "classes"});
}

struct Expected {
  const char* name;
  int64_t channels;
  int64_t classes;
  int64_t parameters;
  int64_t weight_bytes;     // parameters and buffers, float32 and int64 (num_batches_tracked)
  size_t parameter_tensors;
  size_t buffer_tensors;
};

// From torchvision 0.14.1, replacing the first conv for other channel counts
// as the zoo does:
// /usr/bin/python3 -c "import torch.nn as nn, torchvision.models as M
// for n in ['resnet18','resnet34','resnet50','vgg11','vgg11_bn','alexnet','mobilenet_v3_small','mobilenet_v3_large']:
//  for c,k in ((3,1000),(1,10)):
//   m=getattr(M,n)(num_classes=k); p,_,a=next(s for s,x in m.named_modules() if isinstance(x,nn.Conv2d)).rpartition('.'); o=getattr(m.get_submodule(p),a)
//   setattr(m.get_submodule(p),a,nn.Conv2d(c,o.out_channels,o.kernel_size,o.stride,o.padding,bias=o.bias is not None))
//   print(n,c,k,sum(t.numel() for t in m.parameters()),sum(t.numel()*t.element_size() for t in [*m.parameters(),*m.buffers()]),len(list(m.parameters())),len(list(m.buffers())))"
constexpr Expected kTorchvision[] = {
    {"resnet18", 3, 1000, 11689512, 46796608, 62, 60},
    {"resnet18", 1, 10, 11175370, 44740040, 62, 60},
    {"resnet34", 3, 1000, 21797672, 87259072, 110, 108},
    {"resnet34", 1, 10, 21283530, 85202504, 110, 108},
    {"resnet50", 3, 1000, 25557032, 102441032, 161, 159},
    {"resnet50", 1, 10, 23522250, 94301904, 161, 159},
    {"vgg11", 3, 1000, 132863336, 531453344, 22, 0},
    {"vgg11", 1, 10, 128806154, 515224616, 22, 0},
    {"vgg11_bn", 3, 1000, 132868840, 531497440, 38, 24},
    {"vgg11_bn", 1, 10, 128811658, 515268712, 38, 24},
    {"alexnet", 3, 1000, 61100840, 244403360, 16, 0},
    {"alexnet", 1, 10, 57029322, 228117288, 16, 0},
    {"mobilenet_v3_small", 3, 1000, 2542856, 10220144, 142, 102},
    {"mobilenet_v3_small", 1, 10, 1527818, 6159992, 142, 102},
    {"mobilenet_v3_large", 3, 1000, 5483032, 22030096, 174, 138},
    {"mobilenet_v3_large", 1, 10, 4214554, 16956184, 174, 138},
};

// A few state_dict keys per model, so checkpoints and per-layer reports name
// layers as torchvision does (the tensor counts above catch extra or missing ones).
const std::map<std::string, std::vector<std::string>> kTorchvisionKeys = {
    {"resnet18", {"conv1.weight", "bn1.running_var", "layer1.1.conv2.weight", "layer2.0.downsample.0.weight",
                  "layer4.1.bn2.num_batches_tracked", "fc.weight", "fc.bias"}},
    {"resnet34", {"layer3.5.bn2.weight", "layer4.0.downsample.1.running_mean"}},
    {"resnet50", {"layer1.0.downsample.1.weight", "layer3.5.conv3.weight", "layer4.2.bn3.bias"}},
    {"vgg11", {"features.0.weight", "features.18.weight", "classifier.3.weight", "classifier.6.bias"}},
    {"vgg11_bn", {"features.0.weight", "features.1.running_mean", "features.25.weight", "classifier.0.weight",
                  "classifier.6.bias"}},
    {"alexnet", {"features.0.weight", "features.10.bias", "classifier.1.weight", "classifier.6.bias"}},
    {"mobilenet_v3_small", {"features.0.0.weight", "features.0.1.running_var", "features.1.block.0.0.weight",
                            "features.1.block.1.fc1.weight", "features.1.block.1.fc2.bias",
                            "features.4.block.2.fc1.bias", "features.11.block.3.1.weight", "features.12.0.weight",
                            "classifier.0.weight", "classifier.3.bias"}},
    {"mobilenet_v3_large", {"features.1.block.0.0.weight", "features.4.block.2.fc2.weight", "features.16.1.weight",
                            "classifier.3.weight"}},
};

TEST(ModelSize, TorchvisionModelsMatchTorchvision) {
  for (const auto& e : kTorchvision) {
    SCOPED_TRACE(std::string(e.name) + " channels=" + std::to_string(e.channels) +
                 " classes=" + std::to_string(e.classes));
    const auto net = build(e.name, e.channels, e.classes);
    EXPECT_EQ(parameter_count(*net), e.parameters);
    EXPECT_EQ(weight_bytes(*net), e.weight_bytes);
    EXPECT_EQ(net->parameters().size(), e.parameter_tensors);
    EXPECT_EQ(net->buffers().size(), e.buffer_tensors);
    std::set<std::string> keys;
    for (const auto& item : net->named_parameters()) keys.insert(item.key());
    for (const auto& item : net->named_buffers()) keys.insert(item.key());
    for (const auto& key : kTorchvisionKeys.at(e.name)) EXPECT_EQ(keys.count(key), 1u) << "no " << key;
  }
}

TEST(ModelSize, CifarResNetKeysFollowAkamaster) {
  const auto net = build("resnet20", 3, 10, 32);
  const auto params = net->named_parameters();
  for (const char* key : {"conv1.weight", "bn1.bias", "layer1.0.conv1.weight", "layer3.2.bn2.weight", "linear.weight"}) {
    EXPECT_NE(params.find(key), nullptr) << key;
  }
}

// He et al. 2016 table 6 and akamaster/pytorch_resnet_cifar10 report 0.27M,
// 0.46M and 0.85M. Exactly, for 3 channels and 10 classes with option-A
// shortcuts (n blocks per stage, depth 6n+2):
//   stem 3*16*9 + bn 32 = 464
//   stage 1: n * (2*16*16*9 + 2*32) = 4672 n
//   stage 2: (16*32*9 + 32*32*9 + 128) + (n-1) * (2*32*32*9 + 128) = 13952 + 18560 (n-1)
//   stage 3: (32*64*9 + 64*64*9 + 256) + (n-1) * (2*64*64*9 + 256) = 55552 + 73984 (n-1)
//   linear 64*10 + 10 = 650
// resnet20 (n=3) 269722, resnet32 (n=5) 464154, resnet56 (n=9) 853018. One
// input channel removes 2*16*9 = 288; 100 classes add 90*65 = 5850.
TEST(ModelSize, CifarResNetsMatchPublishedCounts) {
  EXPECT_EQ(parameter_count(*build("resnet20", 3, 10, 32)), 269722);
  EXPECT_EQ(parameter_count(*build("resnet32", 3, 10, 32)), 464154);
  EXPECT_EQ(parameter_count(*build("resnet56", 3, 10, 32)), 853018);
  EXPECT_EQ(parameter_count(*build("resnet20", 1, 10, 28)), 269722 - 288);
  EXPECT_EQ(parameter_count(*build("resnet56", 3, 100, 32)), 853018 + 5850);
}

// LeNet-5 on 1x28x28, 10 classes: conv1 6*25 + 6 = 156, conv2 16*6*25 + 16 =
// 2416, fc1 400*120 + 120 = 48120, fc2 120*84 + 84 = 10164, fc3 84*10 + 10 =
// 850: 61706, the count usually given for LeNet-5. Three channels add 2*6*25.
TEST(ModelSize, LeNet5MatchesItsLayerArithmetic) {
  EXPECT_EQ(parameter_count(*build("lenet5", 1, 10, 28)), 61706);
  EXPECT_EQ(parameter_count(*build("lenet5", 3, 10, 32)), 61706 + 300);
}

TEST(ModelSize, CifarResNetShortcutsHaveNoParameters) {
  // Option A: the only parameters are the convs, batch norms and the linear layer.
  const auto net = build("resnet20", 3, 10, 32);
  for (const auto& item : net->named_parameters()) {
    EXPECT_EQ(item.key().find("shortcut"), std::string::npos) << item.key();
    EXPECT_EQ(item.key().find("downsample"), std::string::npos) << item.key();
  }
  // 19 convs and 19 batch norms (2 parameters each) plus linear weight and bias.
  EXPECT_EQ(net->parameters().size(), 19u + 19u * 2u + 2u);
}

TEST(ModelSize, SmallCnn) {
  // conv1 c*32*9+32, conv2 32*64*9+64 = 18496, fc1 3136*128+128 = 401536, fc2 128*k+k.
  EXPECT_EQ(parameter_count(*build("small_cnn", 1, 10, 28)), 320 + 18496 + 401536 + 1290);
  EXPECT_EQ(parameter_count(*build("small_cnn", 3, 10, 32)), 896 + 18496 + 401536 + 1290);
  // The adaptive pool keeps the size independent of the image size.
  EXPECT_EQ(parameter_count(*build("small_cnn", 3, 10, 224)), 896 + 18496 + 401536 + 1290);
}

TEST(ModelSize, WeightBytesCountsBuffers) {
  const auto net = build("small_cnn", 1, 10, 28);
  EXPECT_EQ(weight_bytes(*net), 4 * parameter_count(*net));  // no buffers, all float32
  // resnet20 has 19 batch norms: running mean and var (float32) and
  // num_batches_tracked (int64) each.
  const auto resnet = build("resnet20", 3, 10, 32);
  const int64_t bn_channels = 16 + 3 * 2 * 16 + 3 * 2 * 32 + 3 * 2 * 64;
  EXPECT_EQ(weight_bytes(*resnet), 4 * parameter_count(*resnet) + 2 * 4 * bn_channels + 19 * 8);
}

}  // namespace
}  // namespace tula::models
