// Paths held inside the directories an operator allows (a server's data
// roots). A path is resolved (every symlink and ".." followed) and must lie
// under a root; it is then opened from that root one component at a time,
// following no symlink, so a link swapped in after the check cannot lead the
// open anywhere else: what opens is what was checked, or nothing.
// No LibTorch here.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/fd.hpp"

namespace tula::common {

// A path that names something outside every root, or that cannot be opened
// as it was checked; the message names the path and what is wrong.
class PathOutsideRoots : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct ConfinedPath {
  std::string root;      // the root, resolved
  std::string resolved;  // the path, resolved: root itself or below it
};

// `path` (absolute) resolved now, and the root it lies under; nullopt when it
// lies under none. What does not exist yet is taken as written after the part
// that does (a dangling symlink is not followed: its target is unknown).
std::optional<ConfinedPath> resolve_under(const std::string& path, const std::vector<std::string>& roots);

// `path` resolved against `roots`; throws PathOutsideRoots naming `what` (the
// option or field), the path, where it leads and the roots when it lies
// under none.
ConfinedPath confine(const std::string& what, const std::string& path, const std::vector<std::string>& roots);

// Opens `c.resolved` from `c.root` with `flags` (O_RDONLY, O_DIRECTORY, ...)
// and no symlink followed on the way. Throws PathOutsideRoots naming `what`
// (the option or field) and `given` (the path as the user wrote it) when a
// component is missing, a symlink, or not a directory.
Fd open_confined(const ConfinedPath& c, int flags, const std::string& what, const std::string& given);

// Both steps: confine() and open_confined().
Fd open_under_roots(const std::string& what, const std::string& path, const std::vector<std::string>& roots,
                    int flags);

// The whole file behind `fd`, read from its start.
std::string read_whole(const Fd& fd, const std::string& name);

}  // namespace tula::common
