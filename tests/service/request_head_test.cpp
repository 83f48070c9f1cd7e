// Request heads checked to RFC 9112 before the HTTP library reads them: each
// way a proxy in front could read the same bytes as another request.
#include "service/request_head.hpp"

#include <gtest/gtest.h>

namespace tula::service {
namespace {

const HeadLimits kLimits;

std::optional<HeadProblem> check(const std::string& head) { return check_head(head, kLimits); }

// The problem's message, checked to be a 400 (or `status`).
std::string refused(const std::string& head, int status = 400) {
  const auto problem = check(head);
  if (!problem) {
    ADD_FAILURE() << "accepted: " << head;
    return "";
  }
  EXPECT_EQ(problem->status, status) << problem->message;
  return problem->message;
}

TEST(RequestHead, AWellFormedHeadPasses) {
  EXPECT_FALSE(check("GET /v1/jobs?limit=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"));
  EXPECT_FALSE(check("POST /v1/jobs HTTP/1.0\r\nHost: a\r\nContent-Length: 2\r\nX-Tab:\tv\r\n\r\n"));
}

TEST(RequestHead, AMalformedRequestLineIsRefused) {
  EXPECT_NE(refused("XYZ\r\nGET /v1/jobs HTTP/1.1\r\nHost: a\r\n\r\n").find("malformed request line 'XYZ'"), std::string::npos);
  refused("GET  /v1/jobs HTTP/1.1\r\nHost: a\r\n\r\n");
  refused("GET /v1/jobs HTTP/2.0\r\nHost: a\r\n\r\n");
  refused("G(T /v1/jobs HTTP/1.1\r\nHost: a\r\n\r\n");
  refused("GET /v1/\x01jobs HTTP/1.1\r\nHost: a\r\n\r\n");
}

TEST(RequestHead, AFoldedHeaderLineIsRefused) {
  const auto m = refused("POST /v1/jobs HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n 36\r\n\r\n");
  EXPECT_NE(m.find("obs-fold"), std::string::npos) << m;
}

TEST(RequestHead, WhitespaceBeforeTheColonIsRefused) {
  const auto m = refused("POST /v1/jobs HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n");
  EXPECT_NE(m.find("whitespace before its colon"), std::string::npos) << m;
}

TEST(RequestHead, ABareCrOrLfIsRefused) {
  EXPECT_NE(refused("GET / HTTP/1.1\r\nHost: a\rX-Y: 1\r\n\r\n").find("bare CR"), std::string::npos);
  EXPECT_NE(refused("GET / HTTP/1.1\r\nHost: a\nX-Y: 1\r\n\r\n").find("LF without CR"), std::string::npos);
}

TEST(RequestHead, ControlBytesInAValueAreRefusedAndEscapedInTheMessage) {
  using namespace std::string_literals;
  const auto m = refused("GET / HTTP/1.1\r\nHost: a\r\nX-Y: a\0b\r\n\r\n"s);
  EXPECT_NE(m.find("a\\x00b"), std::string::npos) << m;
  EXPECT_EQ(m.find('\0'), std::string::npos);
}

TEST(RequestHead, TwoFramingHeadersAreRefusedSayingWhich) {
  EXPECT_NE(refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n")
                .find("2 Content-Length headers"),
            std::string::npos);
  EXPECT_NE(refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n")
                .find("2 Transfer-Encoding headers"),
            std::string::npos);
  EXPECT_NE(refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n")
                .find("both Content-Length and Transfer-Encoding"),
            std::string::npos);
}

TEST(RequestHead, TooManyOrTooLargeIs431) {
  std::string many = "GET / HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 100; ++i) many += "X-A: 1\r\n";
  EXPECT_NE(refused(many + "\r\n", 431).find("101 header lines; at most 100"), std::string::npos);
  const std::string large = "GET / HTTP/1.1\r\nHost: a\r\nX-A: " + std::string(70000, 'a') + "\r\n\r\n";
  EXPECT_NE(refused(large, 431).find("larger than 65536 bytes"), std::string::npos);
}

TEST(RequestHead, TheHeadEndsAtItsEmptyLine) {
  EXPECT_FALSE(head_end("GET / HTTP/1.1\r\nHost: a\r\n"));
  EXPECT_EQ(head_end("GET / HTTP/1.1\r\n\r\nnext"), 18u);
}

TEST(BodyFraming, ReadsLengthChunkedAndExpectWhateverTheirCase) {
  const auto framing = [](const std::string& fields) {
    return body_framing("POST /v1/jobs HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n");
  };
  EXPECT_EQ(framing("Content-Length: 42\r\n").length, 42u);
  EXPECT_EQ(framing("content-LENGTH:7 \r\n").length, 7u);
  EXPECT_FALSE(framing("Content-Length: 4x\r\n").length.has_value()) << "not a number: the library refuses it";
  EXPECT_FALSE(framing("X-Content-Length: 5\r\n").length.has_value());
  EXPECT_TRUE(framing("Transfer-Encoding: Chunked\r\n").chunked);
  EXPECT_FALSE(framing("Transfer-Encoding: gzip\r\n").chunked);
  EXPECT_TRUE(framing("Expect: 100-Continue\r\nContent-Length: 3\r\n").expects_continue);
  const auto none = framing("");
  EXPECT_FALSE(none.length.has_value());
  EXPECT_FALSE(none.chunked);
  EXPECT_FALSE(none.expects_continue);
}

}  // namespace
}  // namespace tula::service
