// The files of an image folder data set, found once when it opens: the only
// thing the set keeps in memory. Two layouts, as torchvision's ImageFolder
// reads them:
//   DIR/train/CLASS/**/IMAGE and DIR/val/CLASS/**/IMAGE  (ImageNet's layout)
//   DIR/CLASS/**/IMAGE, split here by a seed             (CalTech-101's)
// IMAGE is a .jpg, .jpeg or .png file in any letter case; other files are
// ignored. Labels are the class folders' names in byte order and files are in
// path order, as torchvision's, so a label means the same class in both.
// Unlike torchvision, names starting with '.' (".DS_Store", macOS "._x.jpg"
// companions, ".ipynb_checkpoints") are ignored, and directory symlinks below a
// class folder are not followed (a loop would never end).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace tula::data {

struct ImageFolderListing {
  std::string root;                  // where the class folders are: DIR/train, DIR/val or DIR
  std::vector<std::string> classes;  // label i is classes[i]
  std::vector<std::string> files;    // grouped by class, in path order within each
  // The files of class c are files[class_begin[c]] .. files[class_begin[c + 1] - 1].
  std::vector<int64_t> class_begin;
  // True for the one-folder layout: the split was drawn from the fraction and
  // seed below, which a run records to be repeatable.
  bool held_out = false;
  double held_out_fraction = 0.0;
  uint64_t split_seed = 0;

  int64_t label_of(int64_t file) const;
};

// Lists `split` of the data set in `dir` (kTrain: train/, kTest: val/, or the
// drawn split). In the one-folder layout a class of n >= 2 images holds out
// round(fraction * n) of them for the test split, at least 1 and at most
// n - 1, chosen by split_seed alone; a class of one image trains on it.
// Throws std::runtime_error naming the path for a missing `dir`, a folder
// with no class folders, a class folder with no image, or class lists that
// differ between train/ and val/; std::invalid_argument for a fraction
// outside (0, 1).
ImageFolderListing list_image_folder(const std::string& dir, Split split, double held_out_fraction,
                                     uint64_t split_seed);

}  // namespace tula::data
