#include "data/image_folder_listing.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/input_roots.hpp"
#include "data/rng.hpp"

namespace tula::data {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kHeldOutStream = 0x686f6c646f7574ULL;  // "holdout": apart from every other seed use

bool hidden(const fs::path& p) { return p.filename().string().starts_with('.'); }

bool has_image_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

std::runtime_error folder_error(const fs::path& path, const std::string& what) {
  return std::runtime_error("imagefolder: " + path.string() + ": " + what);
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The names of the class folders in `root`, in byte order.
std::vector<std::string> class_folders(const fs::path& root) {
  common::require_beneath_roots(root.string());
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!hidden(it->path()) && is_dir(it->path())) names.push_back(it->path().filename().string());
  }
  if (ec) throw folder_error(root, "cannot list: " + ec.message());
  if (names.empty()) throw folder_error(root, "holds no class folders (expected " + (root / "CLASS" / "IMAGE.jpg").string() + ")");
  std::sort(names.begin(), names.end());
  return names;
}

// The image files under one class folder, sorted as torchvision's walk sorts
// them: by folder path, then by name within a folder.
std::vector<std::string> image_files(const fs::path& class_dir) {
  // Under data roots a folder or image that is a link out of its root is
  // refused here, naming it, rather than counted as a bad image when read.
  const bool confined = !common::input_roots().empty();
  if (confined) common::require_beneath_roots(class_dir.string());
  std::vector<std::pair<std::string, std::string>> found;  // (folder, name)
  std::error_code ec;
  fs::recursive_directory_iterator it(class_dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code type_error;  // a dangling link has no type: kept, and reported bad when read
    const bool folder = it->is_directory(type_error);
    if (hidden(p)) {
      if (folder) it.disable_recursion_pending();
      continue;
    }
    std::error_code link_error;
    if (confined && it->is_symlink(link_error)) common::require_beneath_roots(p.string());
    if (!folder && has_image_extension(p)) found.emplace_back(p.parent_path().string(), p.filename().string());
  }
  if (ec) throw folder_error(class_dir, "cannot list: " + ec.message());
  if (found.empty()) throw folder_error(class_dir, "class folder holds no .jpg, .jpeg or .png file");
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  files.reserve(found.size());
  for (const auto& [folder, name] : found) files.push_back((fs::path(folder) / name).string());
  return files;
}

void require_same_classes(const fs::path& train, const std::vector<std::string>& train_classes, const fs::path& val,
                          const std::vector<std::string>& val_classes) {
  for (const auto& c : train_classes) {
    if (!std::binary_search(val_classes.begin(), val_classes.end(), c)) {
      throw folder_error(val, "has no class folder '" + c + "', which " + train.string() +
                                  " has (train and val must hold the same classes)");
    }
  }
  for (const auto& c : val_classes) {
    if (!std::binary_search(train_classes.begin(), train_classes.end(), c)) {
      throw folder_error(train, "has no class folder '" + c + "', which " + val.string() +
                                    " has (train and val must hold the same classes)");
    }
  }
}

// How many of a class's n images the one-folder layout holds out.
int64_t held_out_count(int64_t n, double fraction) {
  if (n < 2) return 0;
  const auto count = static_cast<int64_t>(std::nearbyint(fraction * static_cast<double>(n)));
  return std::clamp<int64_t>(count, 1, n - 1);
}

// Positions of the `count` held-out files among a class's n, drawn from
// (seed, class) so that adding a class does not reshuffle the others.
std::vector<bool> held_out_mask(int64_t n, int64_t count, uint64_t seed, int64_t label) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(mix(mix(seed, kHeldOutStream), static_cast<uint64_t>(label)));
  // Fisher-Yates from the front, stopped after `count` draws.
  for (int64_t i = 0; i < count; ++i) {
    const auto j = i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - i)));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  std::vector<bool> held(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < count; ++i) held[static_cast<size_t>(order[static_cast<size_t>(i)])] = true;
  return held;
}

void add_class(ImageFolderListing& listing, std::vector<std::string> files) {
  if (listing.class_begin.empty()) listing.class_begin.push_back(0);
  for (auto& f : files) listing.files.push_back(std::move(f));
  listing.class_begin.push_back(static_cast<int64_t>(listing.files.size()));
}

ImageFolderListing list_split_folders(const fs::path& dir, Split split) {
  const fs::path train = dir / "train", val = dir / "val";
  if (!is_dir(train)) throw folder_error(dir, "has val/ but no train/ folder");
  if (!is_dir(val)) throw folder_error(dir, "has train/ but no val/ folder");
  const auto train_classes = class_folders(train);
  const auto val_classes = class_folders(val);
  require_same_classes(train, train_classes, val, val_classes);
  ImageFolderListing listing;
  listing.root = (split == Split::kTrain ? train : val).string();
  listing.classes = train_classes;
  for (const auto& c : listing.classes) add_class(listing, image_files(fs::path(listing.root) / c));
  return listing;
}

ImageFolderListing list_one_folder(const fs::path& dir, Split split, double fraction, uint64_t seed) {
  ImageFolderListing listing;
  listing.root = dir.string();
  listing.classes = class_folders(dir);
  listing.held_out = true;
  listing.held_out_fraction = fraction;
  listing.split_seed = seed;
  for (size_t c = 0; c < listing.classes.size(); ++c) {
    auto all = image_files(dir / listing.classes[c]);
    const auto n = static_cast<int64_t>(all.size());
    const auto held = held_out_mask(n, held_out_count(n, fraction), seed, static_cast<int64_t>(c));
    std::vector<std::string> mine;
    for (int64_t i = 0; i < n; ++i) {
      if (held[static_cast<size_t>(i)] == (split == Split::kTest)) mine.push_back(std::move(all[static_cast<size_t>(i)]));
    }
    add_class(listing, std::move(mine));
  }
  return listing;
}

}  // namespace

int64_t ImageFolderListing::label_of(int64_t file) const {
  // class_begin is ascending: the class is the last one starting at or before `file`.
  const auto it = std::upper_bound(class_begin.begin(), class_begin.end(), file);
  return static_cast<int64_t>(it - class_begin.begin()) - 1;
}

ImageFolderListing list_image_folder(const std::string& dir, Split split, double held_out_fraction,
                                     uint64_t split_seed) {
  if (dir.empty()) throw std::runtime_error("imagefolder: no data directory given (--data-dir DIR)");
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::exists(root, ec)) throw folder_error(root, "no such directory");
  if (!is_dir(root)) throw folder_error(root, "not a directory");
  if (is_dir(root / "train") || is_dir(root / "val")) return list_split_folders(root, split);
  if (!(held_out_fraction > 0 && held_out_fraction < 1)) {
    throw std::invalid_argument(
        fmt::format("imagefolder: the held-out fraction must be in (0, 1), got {:f}", held_out_fraction));
  }
  return list_one_folder(root, split, held_out_fraction, split_seed);
}

}  // namespace tula::data
