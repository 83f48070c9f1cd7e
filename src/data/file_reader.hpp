// Reading whole files, or exact byte counts from them, with errors that name
// the file. GzFile reads gzip and plain files alike (zlib passes plain files
// through), so IDX readers need not care which they got.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tula::data {

class GzFile {
 public:
  // Throws std::runtime_error naming `path` when it cannot be opened.
  explicit GzFile(std::string path);
  ~GzFile();
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Reads up to `size` bytes; returns how many were read (fewer only at the
  // end of the data). Throws on a corrupt or truncated gzip stream.
  size_t read(void* buffer, size_t size);
  // Reads exactly `size` bytes or throws "<path>: truncated ... <what>".
  void read_exact(void* buffer, size_t size, const std::string& what);
  // True when no data is left; throws on a corrupt stream (which is where a
  // gzip member's checksum is verified).
  bool at_end();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* file_;  // gzFile, kept opaque so users need not include zlib.h
};

// The whole content of a plain file; throws naming `path` if it is missing
// or cannot be read.
std::vector<uint8_t> read_file(const std::string& path);

}  // namespace tula::data
