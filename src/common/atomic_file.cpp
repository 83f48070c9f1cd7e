#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tula::common {
namespace {

namespace fs = std::filesystem;

// fsync(2) of a file or directory by path; throws naming what it synced.
void sync_path(const std::string& path, int flags, const std::string& what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + what + " " + path + " to sync it: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error("cannot sync " + what + " " + path + ": " + std::strerror(err));
}

}  // namespace

void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  const fs::path target(path);
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error("cannot create directory " + parent.string() + " for " + path + ": " + ec.message());
  // The pid keeps concurrent writers (workers, parallel tests) off each other's temporary file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    write(tmp);
    sync_path(tmp, O_RDONLY, "file");
    fs::rename(tmp, target);
  } catch (const std::exception& e) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write " + path + ": " + e.what());
  }
  sync_path(parent.string(), O_RDONLY | O_DIRECTORY, "directory");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("short write to " + tmp);
  });
}

}  // namespace tula::common
