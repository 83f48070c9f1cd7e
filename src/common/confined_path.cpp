#include "common/confined_path.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/engine_names.hpp"

namespace tula::common {
namespace {

namespace fs = std::filesystem;

// `inner` is `outer` or lies below it (whole components: /data-x is not in /data).
bool contains(const fs::path& outer, const fs::path& inner) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  // An empty last component means `outer` ended with '/'.
  return o == outer.end() || (std::next(o) == outer.end() && o->empty());
}

std::string why_not(int error) {
  switch (error) {
    case ELOOP:
    case ENOTDIR: return "is a symlink or not a directory (it changed after the path was checked)";
    case ENOENT: return "does not exist";
    default: return std::strerror(error);
  }
}

}  // namespace

std::optional<ConfinedPath> resolve_under(const std::string& path, const std::vector<std::string>& roots) {
  if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos) return std::nullopt;
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(fs::path(path), ec);
  if (ec) return std::nullopt;
  for (const auto& root : roots) {
    const fs::path r = fs::weakly_canonical(fs::path(root), ec);
    if (ec || !contains(r, resolved)) continue;
    return ConfinedPath{r.string(), resolved.string()};
  }
  return std::nullopt;
}

Fd open_confined(const ConfinedPath& c, int flags, const std::string& what, const std::string& given) {
  const auto fail = [&](const std::string& part, int error) {
    return PathOutsideRoots(what + " '" + given + "': " + part + " " + why_not(error) + "; nothing was opened");
  };
  Fd dir(::open(c.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) throw fail("the data root " + c.root, errno);
  const fs::path relative = fs::path(c.resolved).lexically_relative(c.root);
  std::vector<std::string> parts;
  for (const auto& p : relative) {
    if (!p.empty() && p != ".") parts.push_back(p.string());
  }
  if (parts.empty()) {
    Fd self(::openat(dir.get(), ".", flags | O_CLOEXEC));
    if (!self) throw fail(c.root, errno);
    return self;
  }
  fs::path walked = c.root;
  for (size_t i = 0; i < parts.size(); ++i) {
    walked /= parts[i];
    const bool last = i + 1 == parts.size();
    const int how = last ? flags | O_NOFOLLOW | O_CLOEXEC : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    Fd next(::openat(dir.get(), parts[i].c_str(), how));
    if (!next) throw fail(walked.string(), errno);
    dir = std::move(next);
  }
  return dir;
}

ConfinedPath confine(const std::string& what, const std::string& path, const std::vector<std::string>& roots) {
  if (auto confined = resolve_under(path, roots)) return *confined;
  std::error_code ec;
  const std::string leads = fs::weakly_canonical(fs::path(path), ec).string();
  throw PathOutsideRoots(what + " '" + path + "'" + (ec || leads == path ? "" : " leads to " + leads + ", which") +
                         " is outside the data roots (" + join_names(roots) + "); nothing was opened");
}

Fd open_under_roots(const std::string& what, const std::string& path, const std::vector<std::string>& roots,
                    int flags) {
  return open_confined(confine(what, path, roots), flags, what, path);
}

std::string read_whole(const Fd& fd, const std::string& name) {
  std::string text;
  char buffer[1 << 16];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd.get(), buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) return text;
    text.append(buffer, static_cast<size_t>(n));
    at += n;
  }
}

}  // namespace tula::common
