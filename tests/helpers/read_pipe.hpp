// Everything a pipe carries until every writer has closed it.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <string>

namespace tula::testing {

inline std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) != 0) {
    if (n > 0) text.append(buffer, static_cast<size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  return text;
}

}  // namespace tula::testing
