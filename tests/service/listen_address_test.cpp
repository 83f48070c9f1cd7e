// --listen and --public-name as `tula serve` reads them, and loopback decided
// by resolving the address rather than by how it is spelled.
#include "service/listen_address.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tula::service {
namespace {

TEST(ListenAddress, HostAndPortWithIpv6InBrackets) {
  EXPECT_EQ(parse_listen("127.0.0.1:8470").host, "127.0.0.1");
  EXPECT_EQ(parse_listen("127.0.0.1:8470").port, 8470);
  EXPECT_EQ(parse_listen("[::1]:0").host, "::1");
  EXPECT_EQ(parse_listen("localhost:80").host, "localhost");
  for (const std::string bad : {"8470", "::1:8470", "[::1]8470", "[nope]:1", "host:", "host:http", "host:70000", ":8470"}) {
    EXPECT_THROW(parse_listen(bad), std::invalid_argument) << bad;
  }
}

TEST(ListenAddress, LoopbackIsWhatTheAddressResolvesTo) {
  for (const std::string host : {"127.0.0.1", "127.3.2.1", "::1", "localhost", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(resolves_to_loopback_only(host)) << host;
  }
  // Spelled like loopback, but a name that does not resolve (.invalid never does).
  for (const std::string host : {"127.example.invalid", "0.0.0.0", "::", "10.0.0.1", "::ffff:10.0.0.1", "localhost.invalid"}) {
    EXPECT_FALSE(resolves_to_loopback_only(host)) << host;
  }
}

TEST(ListenAddress, PublicNamesAreOriginsAsABrowserWritesThem) {
  EXPECT_EQ(parse_public_name("https://Tula.Example.com").origin, "https://tula.example.com");
  EXPECT_EQ(parse_public_name("https://tula.example.com:443/").origin, "https://tula.example.com");
  EXPECT_EQ(parse_public_name("https://tula.example.com:8443").origin, "https://tula.example.com:8443");
  EXPECT_EQ(parse_public_name("tula.example.com:8470").origin, "http://tula.example.com:8470");
  EXPECT_EQ(parse_public_name("tula.example.com:8470").host, "tula.example.com");
  EXPECT_EQ(parse_public_name("http://[2001:db8::1]:8470").host, "[2001:db8::1]");
  for (const std::string bad : {"ftp://x", "https://x/path", "https://", "x:port", "https://a b"}) {
    EXPECT_THROW(parse_public_name(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace tula::service
