#include "common/open_beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <vector>

#include "common/fd.hpp"

namespace tula::common {

int open_beneath(int dir_fd, const std::string& relative, int flags) {
#ifdef SYS_openat2
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof how);
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
#endif
  return open_beneath_by_components(dir_fd, relative, flags);
}

int open_beneath_by_components(int dir_fd, const std::string& relative, int flags) {
  std::vector<std::string> parts;
  std::stringstream in(relative);
  for (std::string part; std::getline(in, part, '/');) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {  // would climb: what openat2 calls leading outside
      errno = EXDEV;
      return -1;
    }
    parts.push_back(part);
  }
  if (parts.empty()) return ::openat(dir_fd, ".", flags | O_CLOEXEC);
  Fd dir;  // the directory walked to so far (none: dir_fd)
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const int how = last ? flags | O_NOFOLLOW | O_CLOEXEC : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    Fd next(::openat(dir ? dir.get() : dir_fd, parts[i].c_str(), how));
    if (!next) return -1;
    dir = std::move(next);
  }
  return dir.release();
}

}  // namespace tula::common
