#include "service/auth.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace tula::service {

bool constant_time_equal(const std::string& a, const std::string& b) {
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

std::string read_token_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::invalid_argument("--token-file " + path + ": no such file");
  if (st.st_mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH)) {
    throw std::invalid_argument("--token-file " + path + " is readable by other users; chmod 600 it");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
  if (token.size() < 16) throw std::invalid_argument("--token-file " + path + ": the token must be at least 16 characters");
  // It travels in a header: a control byte would cut or corrupt it there, and
  // a space would split it from "Bearer".
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c <= 0x20 || c >= 0x7f) {
      throw std::invalid_argument(fmt::format(
          "--token-file {}: the token must be printable ASCII without spaces (byte {:#04x} at offset {} of the token)",
          path, c, i));
    }
  }
  return token;
}

std::string bearer_token(const std::string& authorization) {
  const std::string prefix = "Bearer ";
  if (authorization.size() <= prefix.size() || authorization.compare(0, prefix.size(), prefix) != 0) return "";
  return authorization.substr(prefix.size());
}

}  // namespace tula::service
