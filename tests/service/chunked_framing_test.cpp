// A chunked body's framing, checked byte by byte: what the HTTP library would
// have taken as a whole body when it is not one is refused, saying why.
#include "service/chunked_framing.hpp"

#include <gtest/gtest.h>

namespace tula::service {
namespace {

// The framing after `body` taken whole, then one byte at a time (the same verdict both ways).
ChunkedFraming taken(const std::string& body) {
  ChunkedFraming by_bytes;
  for (const char c : body) {
    if (!by_bytes.take(std::string_view(&c, 1))) break;
  }
  ChunkedFraming whole;
  whole.take(body);
  EXPECT_EQ(whole.complete(), by_bytes.complete()) << body;
  EXPECT_EQ(whole.problem(), by_bytes.problem()) << body;
  return whole;
}

TEST(ChunkedFraming, AWellFramedBodyIsComplete) {
  EXPECT_TRUE(taken("5\r\nhello\r\n0\r\n\r\n").complete());
  EXPECT_TRUE(taken("5;name=v\r\nhello\r\n1\r\n!\r\n0\r\nX-Trailer: 1\r\n\r\n").complete());
  EXPECT_TRUE(taken("A\r\n0123456789\r\n0\r\n\r\n").complete());
}

TEST(ChunkedFraming, DataNotFollowedByCrlfIsRefused) {
  // The body: no CRLF after the data and no last chunk, which the library took whole.
  const auto f = taken("5\r\nhelloGET /v1/jobs HTTP/1.1\r\n\r\n");
  EXPECT_FALSE(f.complete());
  EXPECT_NE(f.problem().find("must be followed by CRLF"), std::string::npos) << f.problem();
}

TEST(ChunkedFraming, AMalformedSizeLineIsRefused) {
  EXPECT_NE(taken("x\r\n").problem().find("start with a hex digit"), std::string::npos);
  EXPECT_NE(taken("5 \r\nhello\r\n").problem().find("after a chunk size"), std::string::npos);
  EXPECT_NE(taken("5\rhello").problem().find("bare CR"), std::string::npos);
  EXPECT_NE(taken("1000000000000000\r\n").problem().find("15 hex digits"), std::string::npos);
}

TEST(ChunkedFraming, ABodyCutShortIsNotComplete) {
  const auto f = taken("5\r\nhello\r\n");
  EXPECT_FALSE(f.complete());
  EXPECT_TRUE(f.problem().empty());
}

TEST(ChunkedFraming, BytesAfterTheLastChunkAreRefused) {
  EXPECT_NE(taken("0\r\n\r\nGET").problem().find("after the last chunk"), std::string::npos);
}

}  // namespace
}  // namespace tula::service
