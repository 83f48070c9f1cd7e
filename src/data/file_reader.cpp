#include "data/file_reader.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "common/input_roots.hpp"

namespace tula::data {
namespace {

gzFile as_gz(void* file) { return static_cast<gzFile>(file); }

std::string describe_open_failure(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return path + ": missing (no such file)";
  if (std::filesystem::is_directory(path, ec)) return path + ": is a directory, not a file";
  return path + ": cannot open: " + std::strerror(errno);
}

}  // namespace

GzFile::GzFile(std::string path) : path_(std::move(path)), file_(nullptr) {
  errno = 0;
  // Under data roots, opened beneath its root (common/input_roots.hpp).
  common::Fd fd = common::open_input(path_, O_RDONLY);
  struct stat st {};
  // A directory opens fine on Linux and fails only on read, with a
  // confusing message; reject it up front.
  if (!fd || ::fstat(fd.get(), &st) != 0 || S_ISDIR(st.st_mode)) throw std::runtime_error(describe_open_failure(path_));
  file_ = gzdopen(fd.get(), "rb");
  if (file_ == nullptr) throw std::runtime_error(describe_open_failure(path_));
  fd.release();  // gzclose closes it
  // The default 8 KiB buffer makes decompressing tens of MiB needlessly slow.
  gzbuffer(as_gz(file_), 1 << 18);
}

GzFile::~GzFile() {
  if (file_ != nullptr) gzclose(as_gz(file_));
}

size_t GzFile::read(void* buffer, size_t size) {
  auto* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < size) {
    // gzread takes an unsigned int count; read huge files in slices.
    const size_t chunk = std::min<size_t>(size - done, 1u << 30);
    const int got = gzread(as_gz(file_), out + done, static_cast<unsigned>(chunk));
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(as_gz(file_), &code);
      throw std::runtime_error(path_ + ": corrupt or truncated gzip data (" +
                               (message != nullptr ? message : "unknown zlib error") + ")");
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  if (done < size) {
    // zlib reports a gzip stream cut short only through gzerror, as a short read.
    int code = 0;
    gzerror(as_gz(file_), &code);
    if (code == Z_BUF_ERROR) {
      throw std::runtime_error(path_ + ": truncated gzip data (unexpected end of file)");
    }
  }
  return done;
}

void GzFile::read_exact(void* buffer, size_t size, const std::string& what) {
  const size_t got = read(buffer, size);
  if (got != size) {
    throw std::runtime_error(fmt::format("{}: truncated: expected {} bytes of {}, found {}", path_, size, what, got));
  }
}

bool GzFile::at_end() {
  char byte = 0;
  return read(&byte, 1) == 0;
}

std::vector<uint8_t> read_file(const std::string& path) {
  errno = 0;
  // Under data roots, opened beneath its root (common/input_roots.hpp).
  const common::Fd fd = common::open_input(path, O_RDONLY);
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw std::runtime_error(describe_open_failure(path));
  const auto size = static_cast<size_t>(st.st_size);
  std::vector<uint8_t> bytes(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd.get(), bytes.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (done != size) throw std::runtime_error(fmt::format("{}: read failed after {} of {} bytes", path, done, size));
  return bytes;
}

}  // namespace tula::data
