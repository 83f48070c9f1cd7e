// Request bodies on a real server: the limit holds whatever the encoding, and
// reading stops at it; a request without a length has no body.
#include <gtest/gtest.h>

#include "service/http_fixture.hpp"

namespace tula::service::testing {
namespace {

const std::string kJob = R"({"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 2})";

void small_bodies(ApiContext& c) { c.max_body_bytes = 64 << 10; }

TEST(HttpBodies, AChunkedBodyIsCutOffAtTheLimitAndAnswered413) {
  InProcessServer server(InProcessServer::loopback(), small_bodies);
  RawConnection conn(server.port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.send("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n"));
  // 64 MiB in chunks of 16 KiB, sent while the server reads, until it answers.
  const std::string chunk = "4000\r\n" + std::string(0x4000, ' ') + "\r\n";
  const size_t whole = 64u << 20;
  size_t sent = 0;
  std::string pending;
  while (sent < whole) {
    const short seen = conn.wait_for(POLLIN | POLLOUT, 60s);
    if (seen == 0 || (seen & POLLIN)) break;
    if (pending.empty()) pending = chunk;
    const ssize_t n = conn.send_some(pending);
    if (n < 0) break;
    pending.erase(0, static_cast<size_t>(n));
    sent += static_cast<size_t>(n);
  }
  const std::string answer = conn.answer();
  EXPECT_EQ(status_of(answer), 413) << answer;
  EXPECT_NE(answer.find("larger than 65536 bytes"), std::string::npos) << answer;
  // What socket buffers hold is a few MiB; a server that read on would have had it all.
  EXPECT_LT(sent, whole / 2) << "the server read " << sent << " bytes of a body it had refused";
  EXPECT_TRUE(server.store().jobs(std::nullopt, 0, 10).empty());
}

TEST(HttpBodies, ABodyAnnouncedAboveTheLimitIsRefusedBeforeItIsSent) {
  InProcessServer server(InProcessServer::loopback(), small_bodies);
  RawConnection conn(server.port());
  ASSERT_TRUE(conn.send("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Content-Length: 67108864\r\n\r\n"));
  const std::string answer = conn.answer();
  EXPECT_EQ(status_of(answer), 413) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << "the unread body ends the connection: " << answer;
  EXPECT_TRUE(conn.closed_by_server());
}

TEST(HttpBodies, AClientThatAsksFirstIsRefusedBeforeSendingItsBody) {
  InProcessServer server(InProcessServer::loopback(), small_bodies);
  RawConnection conn(server.port());
  ASSERT_TRUE(conn.send("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Content-Length: 67108864\r\nExpect: 100-continue\r\n\r\n"));
  const std::string answer = conn.answer();
  EXPECT_EQ(status_of(answer), 413) << "the refusal instead of 100 Continue: " << answer;
}

TEST(HttpBodies, AChunkedBodyWithinTheLimitIsRead) {
  InProcessServer server(InProcessServer::loopback(), small_bodies);
  RawConnection conn(server.port());
  char size[16];
  std::snprintf(size, sizeof size, "%zx", kJob.size());
  ASSERT_TRUE(conn.send("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n" + std::string(size) + "\r\n" + kJob + "\r\n0\r\n\r\n"));
  const std::string answer = conn.answer();
  EXPECT_EQ(status_of(answer), 201) << answer;
}

TEST(HttpBodies, ARequestWithoutALengthHasNoBody) {
  InProcessServer server;
  auto c = server.client();
  const auto job = c.Post("/v1/jobs", kJob, "application/json");
  ASSERT_TRUE(job);
  ASSERT_EQ(job->status, 201) << job->body;
  // No Content-Length, no Transfer-Encoding, the connection left open: the
  // server answers rather than reading a body until the client closes.
  RawConnection conn(server.port());
  ASSERT_TRUE(conn.send("POST /v1/jobs/1/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::string answer = conn.answer();
  EXPECT_EQ(status_of(answer), 202) << answer;
}

TEST(HttpBodies, FramingThatCouldBeReadTwoWaysIsRefused) {
  InProcessServer server;
  for (const auto& [headers, status] : std::vector<std::pair<std::string, int>>{
           {"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", 400},
           {"Content-Length: 2\r\nContent-Length: 2\r\n", 400},
           {"Transfer-Encoding: gzip, chunked\r\n", 501},
           {"Content-Length: 2\r\nContent-Encoding: gzip\r\n", 415}}) {
    RawConnection conn(server.port());
    ASSERT_TRUE(conn.send("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + headers +
                          "\r\n{}"));
    const std::string answer = conn.answer();
    EXPECT_EQ(status_of(answer), status) << headers << answer;
  }
}

}  // namespace
}  // namespace tula::service::testing
