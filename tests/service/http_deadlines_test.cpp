// Clients that hold the server's request threads: a request's headers must
// come within a deadline however slowly they trickle in, one address holds
// only a few connections, and an event stream whose client left frees its
// place at once.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "helpers/wait.hpp"
#include "service/http_fixture.hpp"

namespace tula::service::testing {
namespace {

using tula::testing::eventually;

// A client that sends a request's head one header line at a time, paced by
// `every`, until the server answers or closes the connection, or `give_up`
// passes.
class SlowClient {
 public:
  SlowClient(int port, std::chrono::milliseconds every, std::chrono::seconds give_up) : conn_(port) {
    thread_ = std::thread([this, every, give_up] {
      const auto until = std::chrono::steady_clock::now() + give_up;
      bool open = conn_.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      while (open && std::chrono::steady_clock::now() < until) {
        if (conn_.readable(every)) {  // the server answered or closed: read to the end
          answer_ = conn_.answer(10s);
          open = !conn_.closed_by_server(10s);
          break;
        }
        open = conn_.send("X-Slow: 1\r\n");
      }
      closed_by_server_ = !open;
    });
  }
  ~SlowClient() { finish(); }
  // Waits until the client stops (the server closed, or it gave up).
  void finish() {
    if (thread_.joinable()) thread_.join();
  }
  // After finish():
  bool closed_by_server() const { return closed_by_server_; }
  const std::string& answer() const { return answer_; }

 private:
  RawConnection conn_;
  std::string answer_;
  bool closed_by_server_ = false;
  std::thread thread_;
};

TEST(HttpDeadlines, SlowHeadersOnEveryThreadDoNotStopTheServer) {
  HttpOptions http = InProcessServer::loopback();
  http.threads = 2;
  http.limits.request_deadline = 1s;
  InProcessServer server(http);
  std::vector<std::unique_ptr<SlowClient>> slow;
  for (int i = 0; i < http.threads; ++i) slow.push_back(std::make_unique<SlowClient>(server.port(), 200ms, 120s));
  // Each slow client holds a thread until its deadline; then /healthz gets one.
  const auto health = server.client().Get("/healthz");
  ASSERT_TRUE(health) << "no answer from /healthz while slow clients held every thread";
  EXPECT_EQ(health->status, 200);
  for (auto& s : slow) {
    s->finish();
    EXPECT_TRUE(s->closed_by_server()) << "a client that never finished its headers kept its connection";
    EXPECT_EQ(status_of(s->answer()), 408) << s->answer();
  }
}

// Bodies that trickle in (or never come) are waited for by the waiting
// thread, not a request thread: with more of them open than the server has
// request threads, it still answers at once; a body that comes whole is
// served; one past the deadline is answered 408; over the budget, 503.
TEST(HttpDeadlines, SlowBodiesHoldNoRequestThread) {
  HttpOptions h = InProcessServer::loopback();
  h.threads = 2;
  h.limits.request_deadline = std::chrono::seconds(3);
  h.limits.body_budget = 4000;
  InProcessServer server(h);
  const std::string job = R"({"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 512, "epochs": 2})";
  const auto post = [&](size_t length) {
    return "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(length) + "\r\n\r\n";
  };
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 4; ++i) {  // twice the request threads, each a body begun and stopped
    slow.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(slow.back()->send(post(job.size()) + job.substr(0, 10)));
  }
  RawConnection health(server.port());
  ASSERT_TRUE(health.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_EQ(status_of(health.answer(std::chrono::seconds(2))), 200) << "with every request thread's worth of slow bodies";
  // One of them finishes its body: served.
  ASSERT_TRUE(slow[0]->send(job.substr(10)));
  EXPECT_EQ(status_of(slow[0]->answer()), 201);
  // Over the budget (4,000 bytes: the three left hold 3 x 82): refused at once.
  RawConnection large(server.port());
  ASSERT_TRUE(large.send(post(3900)));
  const std::string busy = large.answer();
  EXPECT_EQ(status_of(busy), 503) << busy;
  EXPECT_NE(busy.find("request bodies"), std::string::npos) << busy;
  // The others pass their deadline: 408, naming the body.
  const std::string late = slow[1]->answer();
  EXPECT_EQ(status_of(late), 408) << late;
  EXPECT_NE(late.find("the request's body did not arrive within"), std::string::npos) << late;
}

TEST(HttpDeadlines, OneClientAddressHoldsAtMostItsShareOfConnections) {
  HttpOptions http = InProcessServer::loopback();
  http.limits.per_client = 2;
  http.limits.idle = 120s;  // held connections wait for their next request all along the test
  InProcessServer server(http);
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 2; ++i) {  // each answered once, so the server holds it
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->send(request));
    ASSERT_EQ(status_of(held.back()->answer()), 200);
  }
  RawConnection third(server.port());
  ASSERT_TRUE(third.send(request));
  const std::string refused = third.answer();
  EXPECT_EQ(status_of(refused), 429) << refused;
  EXPECT_NE(refused.find("at most 2"), std::string::npos) << refused;
  EXPECT_NE(refused.find("X-Content-Type-Options: nosniff"), std::string::npos) << refused;
  RawConnection elsewhere(server.port(), "127.0.0.2");
  if (elsewhere.connected()) {  // another loopback address is another client
    ASSERT_TRUE(elsewhere.send(request));
    EXPECT_EQ(status_of(elsewhere.answer()), 200);
  }
  held.front()->close();
  EXPECT_TRUE(eventually([&] {
    RawConnection again(server.port());
    return again.send(request) && status_of(again.answer()) == 200;
  }, "a connection from the address once one of its two was closed"));
}

TEST(HttpDeadlines, AnEventStreamWhoseClientLeftFreesItsPlace) {
  InProcessServer server(InProcessServer::loopback(), [](ApiContext& c) {
    c.max_event_streams = 1;
    c.event_keepalive = std::chrono::hours(1);  // no keep-alive write finds the client gone
  });
  ASSERT_EQ(server.client().Post("/v1/jobs", R"({"model": "small_cnn", "dataset": "synthetic", "epochs": 2})",
                                 "application/json")->status, 201);
  const std::string request = "GET /v1/jobs/1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  auto first = std::make_unique<RawConnection>(server.port());
  ASSERT_TRUE(first->send(request));
  ASSERT_EQ(status_of(first->answer()), 200);
  RawConnection second(server.port());
  ASSERT_TRUE(second.send(request));
  const std::string busy = second.answer();
  ASSERT_EQ(status_of(busy), 503) << busy;
  first.reset();  // the client leaves
  EXPECT_TRUE(eventually([&] {
    RawConnection again(server.port());
    return again.send(request) && status_of(again.answer()) == 200;
  }, "the event stream's place once its client closed the connection"));
}

}  // namespace
}  // namespace tula::service::testing
