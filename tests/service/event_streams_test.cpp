// Event streams on the event pump, over real sockets: more streams than the
// server has request threads, each getting its job's events as chunks while
// the server goes on answering; a keep-alive on a quiet stream; the `end`
// event and the last chunk once the job is over; and a client that does not
// read losing its stream (its place freed) rather than the server buffering
// for it without end.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "helpers/wait.hpp"
#include "records/states.hpp"
#include "service/event_pump.hpp"
#include "service/http_fixture.hpp"

namespace tula::service::testing {
namespace {

const std::string kJob = R"({"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 2})";
const std::string kEvents = "GET /v1/jobs/1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

HttpOptions two_threads() {
  HttpOptions h = InProcessServer::loopback();
  h.threads = 2;
  return h;
}

TEST(EventStreams, MoreStreamsThanRequestThreadsEachGetTheirJobsEventsToTheEnd) {
  InProcessServer server(two_threads(), [](ApiContext& c) {
    c.max_event_streams = 6;
    c.max_event_streams_per_client = 6;
    c.event_keepalive = std::chrono::hours(1);
  });
  ASSERT_EQ(server.client().Post("/v1/jobs", kJob, "application/json")->status, 201);
  std::vector<std::unique_ptr<RawConnection>> streams;
  for (int i = 0; i < 5; ++i) {  // with the request below, 6 of the address's 8 connections
    streams.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(streams.back()->send(kEvents));
    const std::string& got = streams.back()->read_until("event: state");
    ASSERT_EQ(status_of(got), 200) << got;
    EXPECT_NE(got.find("Transfer-Encoding: chunked"), std::string::npos) << got;
    EXPECT_NE(got.find("\"state\":\"queued\""), std::string::npos) << got;
  }
  // Five open streams, two request threads: the server still answers.
  RawConnection health(server.port());
  ASSERT_TRUE(health.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_EQ(status_of(health.answer(std::chrono::seconds(30))), 200) << "with every request thread's worth of streams open";
  health.close();

  server.events().publish(2, "progress", {{"job", "another"}});
  server.events().publish(1, "progress", {{"fraction", 0.5}});
  for (auto& s : streams) {
    const std::string& got = s->read_until("\"fraction\":0.5");
    EXPECT_NE(got.find("event: progress\ndata: {\"fraction\":0.5}"), std::string::npos) << got;
    EXPECT_EQ(got.find("another"), std::string::npos) << "another job's event: " << got;
  }
  ASSERT_TRUE(server.store().transition(1, records::JobState::Cancelled, "cancelled by the test"));
  server.events().publish(1, "state", {{"state", "cancelled"}, {"reason", "cancelled by the test"}});
  for (auto& s : streams) {
    const std::string& got = s->read_until("0\r\n\r\n");
    EXPECT_NE(got.find("event: end\ndata: {\"state\":\"cancelled\"}"), std::string::npos) << got;
    EXPECT_TRUE(s->closed_by_server()) << "a stream went on after its job's end";
  }
  EXPECT_TRUE(tula::testing::eventually([&] {
    RawConnection again(server.port());
    return again.send(kEvents) && status_of(again.read_until("event: end")) == 200;
  }, "the six streams' places back, and a stream of an ended job ending at once"));
}

TEST(EventStreams, AQuietStreamGetsKeepAlives) {
  InProcessServer server(two_threads(), [](ApiContext& c) { c.event_keepalive = std::chrono::milliseconds(100); });
  ASSERT_EQ(server.client().Post("/v1/jobs", kJob, "application/json")->status, 201);
  RawConnection stream(server.port());
  ASSERT_TRUE(stream.send(kEvents));
  const std::string& got = stream.read_until(": keep-alive\n\n");
  EXPECT_NE(got.find(": keep-alive\n\n"), std::string::npos) << got;
}

// Events far larger than a socket's buffers, to a client that never reads:
// its stream is dropped once EventPump::kMaxUnwritten bytes wait, and the
// one stream the server allows is free again.
TEST(EventStreams, AClientThatDoesNotReadLosesItsStream) {
  InProcessServer server(two_threads(), [](ApiContext& c) {
    c.max_event_streams = 1;
    c.event_keepalive = std::chrono::hours(1);
  });
  ASSERT_EQ(server.client().Post("/v1/jobs", kJob, "application/json")->status, 201);
  RawConnection idle(server.port());
  ASSERT_TRUE(idle.send(kEvents));
  ASSERT_EQ(status_of(idle.read_until("event: state")), 200);
  const std::string big(4096, 'x');
  for (int i = 0; i < 4000; ++i) server.events().publish(1, "progress", {{"filler", big}});  // 16 MB
  EXPECT_TRUE(tula::testing::eventually([&] {
    RawConnection again(server.port());
    return again.send(kEvents) && status_of(again.read_until("event: state")) == 200;
  }, "the place of a stream whose client read nothing"));
}

}  // namespace
}  // namespace tula::service::testing
