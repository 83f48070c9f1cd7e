#include "service/auth.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <utility>
#include <vector>

#include "helpers/temp_dir.hpp"

namespace tula::service {
namespace {

TEST(Auth, ComparesTokensWhole) {
  EXPECT_TRUE(constant_time_equal("s3cret-token-0123", "s3cret-token-0123"));
  EXPECT_FALSE(constant_time_equal("s3cret-token-0123", "s3cret-token-0124"));
  EXPECT_FALSE(constant_time_equal("s3cret", "s3cret-token-0123")) << "a prefix is not the token";
  EXPECT_FALSE(constant_time_equal("", "x"));
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("Basic abc"), "");
  EXPECT_EQ(bearer_token("Bearer "), "");
}

TEST(Auth, ATokenFileMustBePrivateAndLongEnough) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "token").string();
  std::ofstream(path) << "  0123456789abcdef0123\n";
  ::chmod(path.c_str(), 0644);
  EXPECT_THROW(read_token_file(path), std::invalid_argument) << "readable by others";
  ::chmod(path.c_str(), 0600);
  EXPECT_EQ(read_token_file(path), "0123456789abcdef0123");
  std::ofstream(path) << "short";
  EXPECT_THROW(read_token_file(path), std::invalid_argument);
  EXPECT_THROW(read_token_file(path + ".missing"), std::invalid_argument);
}

std::string refusal_of(const std::string& path) {
  try {
    read_token_file(path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Auth, ATokenMustBePrintable) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "token").string();
  for (const auto& [text, byte] : std::vector<std::pair<std::string, std::string>>{
           {std::string("0123\0" "456789abcdef0123\n", 21), "0x00"},
           {"0123\x1b[2J456789abcdef\n", "0x1b"},
           {"0123456789 abcdef0123\n", "0x20"},
           {"0123456789abcdef\x7f\n", "0x7f"}}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    ::chmod(path.c_str(), 0600);
    const std::string message = refusal_of(path);
    EXPECT_NE(message.find("printable"), std::string::npos) << message;
    EXPECT_NE(message.find(byte), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tula::service
