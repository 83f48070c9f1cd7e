// The server against clients that do what no well-behaved client does: each
// case of a request a proxy in front could read differently (smuggling), of
// a client that holds connections open or sends its head slowly from many
// addresses, and of one that floods headers. Each failed on the server that
// gave a thread to each connection and let cpp-httplib parse heads leniently.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "helpers/wait.hpp"
#include "service/http_fixture.hpp"

namespace tula::service::testing {
namespace {

const std::string kJob = R"({"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 2})";
const std::string kHost = "Host: 127.0.0.1\r\n";

// The answer to `bytes` sent on a fresh connection, and whether the server
// then closed the connection without a second answer.
struct Exchange {
  std::string answer;
  bool closed = false;
};

Exchange exchange(int port, const std::string& bytes) {
  RawConnection conn(port);
  EXPECT_TRUE(conn.send(bytes));
  Exchange e;
  e.answer = conn.answer();
  e.closed = conn.closed_by_server();
  return e;
}

// `n` loopback addresses other than 127.0.0.1 can be bound here (Linux routes all of 127/8).
bool other_addresses_work(int port) { return RawConnection(port, "127.0.0.2").connected(); }

std::string address(int i) { return "127.0." + std::to_string(1 + i / 250) + "." + std::to_string(2 + i % 250); }

TEST(HttpHostile, AMalformedRequestLineEndsTheConnection) {
  InProcessServer server;
  // cpp-httplib answered 400 and then served the second request: 200 with the job list.
  const auto e = exchange(server.port(), "XYZ\r\nGET /v1/jobs HTTP/1.1\r\n" + kHost + "\r\n");
  EXPECT_EQ(status_of(e.answer), 400) << e.answer;
  EXPECT_NE(e.answer.find("malformed request line 'XYZ'"), std::string::npos) << e.answer;
  EXPECT_TRUE(e.closed) << "a second answer came on the connection";
}

TEST(HttpHostile, AFoldedOrSpacedFramingHeaderIsRefusedAndCreatesNothing) {
  InProcessServer server;
  char size[16];
  std::snprintf(size, sizeof size, "%zx", kJob.size());
  const std::string chunked_job = std::string(size) + "\r\n" + kJob + "\r\n0\r\n\r\n";
  for (const auto& [head, says] : std::vector<std::pair<std::string, std::string>>{
           {"Content-Length: 0\r\n 36\r\n", "obs-fold"},
           {"Transfer-Encoding : chunked\r\n", "whitespace before its colon"},
           {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "2 Transfer-Encoding headers"},
           {"Content-Length: 3\r\nContent-Length: 3\r\n", "2 Content-Length headers"},
           {"X-A: 1\rTransfer-Encoding: chunked\r\n", "bare CR"}}) {
    const auto e = exchange(server.port(), "POST /v1/jobs HTTP/1.1\r\n" + kHost +
                                               "Content-Type: application/json\r\n" + head + "\r\n" + chunked_job);
    EXPECT_EQ(status_of(e.answer), 400) << head << e.answer;
    EXPECT_NE(e.answer.find(says), std::string::npos) << e.answer;
    EXPECT_TRUE(e.closed) << head;
  }
  EXPECT_TRUE(server.store().jobs(std::nullopt, 0, 10).empty());
}

TEST(HttpHostile, AChunkedBodyWithoutItsCrlfOrLastChunkCreatesNothing) {
  InProcessServer server;
  char size[16];
  std::snprintf(size, sizeof size, "%zx", kJob.size());
  // No CRLF after the data and no 0 chunk: the library took the body as whole and created the job.
  const auto e = exchange(server.port(), "POST /v1/jobs HTTP/1.1\r\n" + kHost +
                                             "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                             std::string(size) + "\r\n" + kJob + "GET /v1/jobs HTTP/1.1\r\n" + kHost +
                                             "\r\n");
  EXPECT_EQ(status_of(e.answer), 400) << e.answer;
  EXPECT_NE(e.answer.find("malformed chunked body"), std::string::npos) << e.answer;
  EXPECT_TRUE(server.store().jobs(std::nullopt, 0, 10).empty());
}

TEST(HttpHostile, AHeaderFloodIsCutAtTheCap) {
  InProcessServer server;
  RawConnection conn(server.port());
  ASSERT_TRUE(conn.send("GET /healthz HTTP/1.1\r\n" + kHost));
  // 100,000 small headers (the old server took them all), sent until the server answers.
  size_t sent = 0;
  for (int i = 0; i < 100000 && !conn.readable(); ++i) {
    if (!conn.send("X-" + std::to_string(i) + ": 1\r\n")) break;
    sent += 1;
  }
  const std::string answer = conn.answer();
  EXPECT_EQ(status_of(answer), 431) << answer;
  EXPECT_NE(answer.find("larger than 65536 bytes"), std::string::npos) << answer;
  EXPECT_LT(sent, 100000u) << "the server read every header line";
}

TEST(HttpHostile, SlowHeadsFromManyAddressesHoldNoRequestThread) {
  HttpOptions http = InProcessServer::loopback();
  http.threads = 2;
  http.limits.request_deadline = 600s;  // a thread given to each would be held far past the wait below
  InProcessServer server(http);
  if (!other_addresses_work(server.port())) GTEST_SKIP() << "no loopback address but 127.0.0.1 can be bound here";
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      slow.push_back(std::make_unique<RawConnection>(server.port(), address(i)));
      ASSERT_TRUE(slow.back()->send("GET /healthz HTTP/1.1\r\n" + kHost + "X-Slow: 1\r\n"));
    }
  }
  RawConnection health(server.port(), address(100));
  ASSERT_TRUE(health.send("GET /healthz HTTP/1.1\r\n" + kHost + "\r\n"));
  const std::string answer = health.answer(60s);
  EXPECT_EQ(status_of(answer), 200) << "no answer to /healthz while 64 heads trickled in on 2 threads: " << answer;
}

TEST(HttpHostile, IdleKeptAliveConnectionsHoldNoRequestThread) {
  HttpOptions http = InProcessServer::loopback();
  http.threads = 2;
  http.limits.idle = 600s;
  InProcessServer server(http);
  const std::string request = "GET /healthz HTTP/1.1\r\n" + kHost + "\r\n";
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 6; ++i) {  // each answered, then left open and idle
    idle.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(idle.back()->send(request));
    ASSERT_EQ(status_of(idle.back()->answer(60s)), 200) << "connection " << i << " of 6 on 2 threads";
  }
  // And each can still carry its next request.
  ASSERT_TRUE(idle.front()->send(request));
  EXPECT_EQ(status_of(idle.front()->answer(60s)), 200);
}

TEST(HttpHostile, ConnectionsOverTheTotalCapAreRefusedAtOnce) {
  HttpOptions http = InProcessServer::loopback();
  http.limits.total = 4;
  http.limits.idle = 600s;
  InProcessServer server(http);
  const std::string request = "GET /healthz HTTP/1.1\r\n" + kHost + "\r\n";
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {  // answered once each, so the server holds them
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->send(request));
    ASSERT_EQ(status_of(held.back()->answer()), 200);
  }
  RawConnection fifth(server.port());
  const std::string refused = fifth.answer();  // sent unasked: nothing of it was read
  EXPECT_EQ(status_of(refused), 503) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos) << refused;
  EXPECT_NE(refused.find("holds 4 connections"), std::string::npos) << refused;
  held.front()->close();
  EXPECT_TRUE(tula::testing::eventually([&] {
    RawConnection again(server.port());
    return again.send(request) && status_of(again.answer()) == 200;
  }, "a connection once one of the four was closed"));
}

TEST(HttpHostile, OneAddressHoldsItsShareOfEventStreams) {
  InProcessServer server(InProcessServer::loopback(), [](ApiContext& c) {
    c.max_event_streams = 4;
    c.max_event_streams_per_client = 1;
    c.event_keepalive = std::chrono::hours(1);
  });
  ASSERT_EQ(server.client().Post("/v1/jobs", kJob, "application/json")->status, 201);
  const std::string request = "GET /v1/jobs/1/events HTTP/1.1\r\n" + kHost + "\r\n";
  RawConnection first(server.port());
  ASSERT_TRUE(first.send(request));
  ASSERT_EQ(status_of(first.answer()), 200);
  RawConnection second(server.port());
  ASSERT_TRUE(second.send(request));
  const std::string busy = second.answer();
  EXPECT_EQ(status_of(busy), 503) << busy;
  EXPECT_NE(busy.find("Retry-After: 5"), std::string::npos) << busy;
  EXPECT_NE(busy.find("127.0.0.1 has 1 event streams open"), std::string::npos) << busy;
  EXPECT_TRUE(second.closed_by_server()) << "a client turned away kept its connection";
  RawConnection elsewhere(server.port(), "127.0.0.2");
  if (elsewhere.connected()) {
    ASSERT_TRUE(elsewhere.send(request));
    EXPECT_EQ(status_of(elsewhere.answer()), 200);
  }
}

}  // namespace
}  // namespace tula::service::testing
