// The stream a request thread reads and writes a connection through: an
// answer's head is held and leaves with its body in one call; it leaves
// alone when the stream is flushed, asked whether it is writable, read from
// or released; a head too large to hold leaves at once. On a socket pair,
// whose other end shows what was sent and when.
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "service/connection_stream.hpp"

namespace tula::service {
namespace {

using std::chrono::milliseconds;

class Pair {
 public:
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    server_ = common::Fd(fds[0]);
    client_ = common::Fd(fds[1]);
  }
  ConnectionStream stream() {
    ConnectionStream s(std::move(server_), ends_, "", milliseconds(5000));
    s.begin_request(ConnectionStream::Clock::now(), milliseconds(15000));
    return s;
  }
  // What the client end has received so far (nothing waited for).
  std::string received() {
    std::string out;
    std::array<char, 8192> buffer;
    for (;;) {
      const ssize_t n = ::recv(client_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n <= 0) return out;
      out.append(buffer.data(), static_cast<size_t>(n));
    }
  }
  int client() const { return client_.get(); }

 private:
  SocketEnds ends_;
  common::Fd server_, client_;
};

const std::string kHead = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n";

TEST(ConnectionStream, TheHeadLeavesWithTheBodyInOneSend) {
  Pair pair;
  auto stream = pair.stream();
  ASSERT_EQ(stream.write(kHead.data(), kHead.size()), static_cast<ssize_t>(kHead.size()));
  EXPECT_EQ(pair.received(), "") << "the head left before its body";
  EXPECT_EQ(stream.written(), kHead.size()) << "a held head counts as answered";
  ASSERT_EQ(stream.write("body", 4), 4);
  EXPECT_EQ(pair.received(), kHead + "body");
}

TEST(ConnectionStream, AHeldHeadLeavesAloneWhenFlushedOrReleased) {
  Pair pair;
  {
    auto stream = pair.stream();
    ASSERT_EQ(stream.write(kHead.data(), kHead.size()), static_cast<ssize_t>(kHead.size()));
    ASSERT_TRUE(stream.flush());
    EXPECT_EQ(pair.received(), kHead);
    // Only a request's first write is held.
    ASSERT_EQ(stream.write("body", 4), 4);
    EXPECT_EQ(pair.received(), "body");
    stream.begin_request(ConnectionStream::Clock::now(), milliseconds(15000));
    ASSERT_EQ(stream.write(kHead.data(), kHead.size()), static_cast<ssize_t>(kHead.size()));
    std::string unread;
    const common::Fd sock = stream.release(unread);
    EXPECT_EQ(pair.received(), kHead) << "release sends what it held";
  }
}

TEST(ConnectionStream, AHeldHeadLeavesBeforeTheStreamWaits) {
  Pair pair;
  auto stream = pair.stream();
  // A streamed answer asks whether it may write before each part, and may
  // wait for the part: its head must not wait with it.
  ASSERT_EQ(stream.write(kHead.data(), kHead.size()), static_cast<ssize_t>(kHead.size()));
  EXPECT_TRUE(stream.is_writable());
  EXPECT_EQ(pair.received(), kHead);
  // A read that would wait for the client sends a held head first.
  stream.begin_request(ConnectionStream::Clock::now(), milliseconds(15000));
  ASSERT_EQ(stream.write(kHead.data(), kHead.size()), static_cast<ssize_t>(kHead.size()));
  ASSERT_EQ(::send(pair.client(), "x", 1, 0), 1);
  char c = 0;
  ASSERT_EQ(stream.read(&c, 1), 1);
  EXPECT_EQ(pair.received(), kHead);
}

TEST(ConnectionStream, AHeadTooLargeToHoldLeavesAtOnce) {
  Pair pair;
  auto stream = pair.stream();
  const std::string head = "HTTP/1.1 200 OK\r\nX-Long: " + std::string(4000, 'a') + "\r\n\r\n";
  ASSERT_EQ(stream.write(head.data(), head.size()), static_cast<ssize_t>(head.size()));
  EXPECT_EQ(pair.received(), head);
}

}  // namespace
}  // namespace tula::service
