#include "tune/input_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/confined_path.hpp"

namespace tula::tune {

std::string input_directory(const TuneOptions& o, const std::string& flag, const std::string& path) {
  if (o.job.data_roots.empty()) {
    if (!std::filesystem::is_directory(path)) throw std::invalid_argument(flag + " " + path + ": no such directory");
    // The child runs in the job's directory, where a relative path would name another place.
    return std::filesystem::absolute(path).lexically_normal().string();
  }
  const auto confined = common::confine(flag, path, o.job.data_roots);
  // Opened to prove every component is what was resolved; the child opens the resolved path.
  common::open_confined(confined, O_RDONLY | O_DIRECTORY, flag, path);
  return confined.resolved;
}

std::string read_input_file(const TuneOptions& o, const std::string& flag, const std::string& path) {
  // Non-blocking: a FIFO in its place would otherwise hold the open forever.
  const int flags = O_RDONLY | O_NONBLOCK;
  const common::Fd fd = o.job.data_roots.empty() ? common::Fd(::open(path.c_str(), flags | O_CLOEXEC))
                                                 : common::open_under_roots(flag, path, o.job.data_roots, flags);
  if (!fd) throw std::invalid_argument(flag + " " + path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw std::invalid_argument(flag + " " + path + ": not a regular file");
  return common::read_whole(fd, path);
}

}  // namespace tula::tune
