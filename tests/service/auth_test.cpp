#include "service/auth.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

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
  EXPECT_TRUE(is_loopback("127.0.0.1"));
  EXPECT_FALSE(is_loopback("0.0.0.0"));
}

}  // namespace
}  // namespace tula::service
