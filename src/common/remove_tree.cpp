#include "common/remove_tree.hpp"

#include <ftw.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tula::common {
namespace {

// nftw's callback has no user argument: the first failure of the walk in
// progress is kept here (one walk at a time per thread).
thread_local std::string first_failure;

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  if (std::remove(path) != 0 && errno != ENOENT && first_failure.empty()) {
    first_failure = std::string(path) + ": " + std::strerror(errno);
  }
  return 0;  // go on: remove what can be removed
}

}  // namespace

std::string remove_tree(const std::filesystem::path& path) {
  first_failure.clear();
  // Children before their folder (FTW_DEPTH), links themselves (FTW_PHYS).
  if (nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT && first_failure.empty()) {
    first_failure = path.string() + ": " + std::strerror(errno);
  }
  return first_failure;
}

}  // namespace tula::common
