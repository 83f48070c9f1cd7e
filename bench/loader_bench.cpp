// Images per second through Tula's image-folder loader, as `tula train` runs
// it on the training split: decode (DCT-scaled where the crop allows),
// RandomResizedCrop, horizontal flip, normalize (folded into the decode), batch; `--threads` decoding
// threads (the loader's producer is one of them), one intra-op thread for the
// normalization, batches prepared ahead as in training. No model: what is
// timed is the data path alone. bench/loader_speed.py runs it beside
// torchvision's ImageFolder + DataLoader.
//
//   tula_loader_bench --data-dir DIR [--image-size 224] [--threads 1] [--batch-size 64] [--batches 40] [--warmup 3]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>

#include "data/dataset.hpp"
#include "data/image_folder.hpp"
#include "data/loader.hpp"
#include "data/sampler.hpp"
#include "kernels/heap_tuning.hpp"

namespace {

struct Args {
  std::string data_dir;
  int64_t image_size = 224;
  int64_t threads = 1;
  int64_t batch_size = 64;
  int64_t batches = 40;
  int64_t warmup = 3;
  uint64_t seed = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--data-dir") a.data_dir = value;
    else if (flag == "--image-size") a.image_size = std::stoll(value);
    else if (flag == "--threads") a.threads = std::stoll(value);
    else if (flag == "--batch-size") a.batch_size = std::stoll(value);
    else if (flag == "--batches") a.batches = std::stoll(value);
    else if (flag == "--warmup") a.warmup = std::stoll(value);
    else if (flag == "--seed") a.seed = std::stoull(value);
    else throw std::invalid_argument("unknown option " + flag);
  }
  if (a.data_dir.empty()) throw std::invalid_argument("--data-dir is required");
  if (a.threads < 1 || a.batch_size < 1 || a.batches < 1 || a.warmup < 0) {
    throw std::invalid_argument("--threads, --batch-size and --batches must be positive, --warmup >= 0");
  }
  return a;
}

int run(const Args& a) {
  torch::set_num_threads(1);
  tula::kernels::keep_freed_memory_for_reuse();  // as the engine does at start
  tula::data::DatasetOptions d;
  d.name = "imagefolder";
  d.data_dir = a.data_dir;
  d.image_folder.image_size = a.image_size;
  d.image_folder.channels = 3;
  d.image_folder.decode_threads = a.threads;
  d.image_folder.idle_priority = false;  // nothing else runs: no training step to leave the cores to
  auto set = tula::data::open_image_folder(d, tula::data::Split::kTrain);
  set->normalize_on_decode(set->channel_mean(), set->channel_std());  // as tula train: folded into the decode

  tula::data::SamplerOptions so;
  so.dataset_size = set->size();
  so.seed = a.seed;
  const auto indices = tula::data::DistributedSampler(so).indices(0);
  const int64_t needed = (a.warmup + a.batches) * a.batch_size;
  if (needed > static_cast<int64_t>(indices.size())) {
    throw std::invalid_argument("the folder has " + std::to_string(indices.size()) + " images; " +
                                std::to_string(needed) + " are needed for --warmup + --batches batches");
  }
  tula::data::LoaderOptions lo;
  lo.batch_size = a.batch_size;
  lo.seed = a.seed;
  lo.idle_priority = false;
  lo.transform.train = true;
  tula::data::PrefetchLoader loader(set, indices, lo);

  using Clock = std::chrono::steady_clock;
  for (int64_t i = 0; i < a.warmup; ++i) loader.next();
  const auto start = Clock::now();
  int64_t images = 0;
  for (int64_t i = 0; i < a.batches; ++i) {
    const auto batch = loader.next();
    if (!batch) throw std::runtime_error("the loader ended early");
    images += batch->labels.size(0);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("{\"images\": %lld, \"seconds\": %.4f, \"images_per_s\": %.2f, \"threads\": %lld, \"image_size\": %lld, "
              "\"batch_size\": %lld, \"bad_images\": %lld}\n",
              static_cast<long long>(images), seconds, static_cast<double>(images) / seconds,
              static_cast<long long>(a.threads), static_cast<long long>(a.image_size),
              static_cast<long long>(a.batch_size), static_cast<long long>(set->bad_images()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tula_loader_bench: %s\n", e.what());
    return 1;
  }
}
