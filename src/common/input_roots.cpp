#include "common/input_roots.hpp"

#include <fcntl.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "common/open_beneath.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;

// `inner` is `outer` or lies below it, by whole components.
bool lexically_under(const fs::path& outer, const fs::path& inner) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end() || (std::next(o) == outer.end() && o->empty());
}

std::string why_refused(int error, const std::string& root) {
  switch (error) {
    case EXDEV: return "leads outside the data root " + root + " (a symlink or '..' on the way points out of it)";
    case ELOOP:
    case ENOTDIR: return "has a symlink or a non-directory on the way, which is not followed under the data root " + root;
    case ENOENT: return "does not exist";
    default: return std::strerror(error);
  }
}

}  // namespace

std::vector<std::string> input_roots() {
  std::vector<std::string> roots;
  const char* value = ::getenv(kDataRootsVariable);
  if (value == nullptr) return roots;
  std::stringstream in(value);
  for (std::string root; std::getline(in, root, ':');) {
    if (!root.empty()) roots.push_back(root);
  }
  return roots;
}

void pass_input_roots(const std::vector<std::string>& roots) {
  if (roots.empty()) {
    ::unsetenv(kDataRootsVariable);
    return;
  }
  std::string value;
  for (const auto& root : roots) {
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(root, ec);
    value += (value.empty() ? "" : ":") + (ec ? root : resolved.string());
  }
  ::setenv(kDataRootsVariable, value.c_str(), 1);
}

Fd open_input(const std::string& path, int flags) {
  const auto roots = input_roots();
  if (roots.empty()) return Fd(::open(path.c_str(), flags | O_CLOEXEC));
  const fs::path wanted = fs::path(path).lexically_normal();
  const std::string* best = nullptr;  // the deepest root the path lies under, as written
  for (const auto& root : roots) {
    if (wanted.is_absolute() && lexically_under(fs::path(root).lexically_normal(), wanted) &&
        (best == nullptr || root.size() > best->size())) {
      best = &root;
    }
  }
  // Outside every root: no path of the job's (those the server checked all lie
  // under one), but a place the engine chose, a data set's usual one.
  if (best == nullptr) return Fd(::open(path.c_str(), flags | O_CLOEXEC));
  const Fd root(::open(best->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) throw PathOutsideRoots(path + ": the data root " + *best + " cannot be opened (" + std::strerror(errno) + ")");
  const std::string relative = wanted.lexically_relative(fs::path(*best).lexically_normal()).string();
  Fd fd(open_beneath(root.get(), relative.empty() ? "." : relative, flags));
  if (!fd) throw PathOutsideRoots(path + ": " + why_refused(errno, *best) + "; nothing was read");
  return fd;
}

void require_beneath_roots(const std::string& path) {
  if (input_roots().empty()) return;
  open_input(path, O_PATH);
}

}  // namespace tula::common
