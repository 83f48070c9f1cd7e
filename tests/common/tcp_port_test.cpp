// common/tcp_port: waiting for a listener, as a worker waits for rank 0's store.
#include "common/tcp_port.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include <gtest/gtest.h>

#include "helpers/free_port.hpp"
#include "helpers/listening_socket.hpp"

namespace tula::common {
namespace {

using namespace std::chrono_literals;

// Listens on `port` of loopback until destroyed; false from ok() when the
// port was taken meanwhile.
class ListenerOn {
 public:
  explicit ListenerOn(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr = ipv4_address("127.0.0.1", port);
    const int on = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd_, 4) == 0;
  }
  ~ListenerOn() { ::close(fd_); }
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = false;
};

TEST(ListenerWait, ReturnsAtOnceWhereSomebodyListens) {
  const testing::ListeningSocket listener;
  EXPECT_TRUE(wait_for_listener("127.0.0.1", listener.port(), 60s));
  EXPECT_TRUE(wait_for_listener("localhost", listener.port(), 60s)) << "a host name is resolved";
}

TEST(ListenerWait, GivesUpAtItsTimeoutWhereNobodyListens) {
  ASSERT_TRUE(testing::with_free_port([](int port) {
    const bool accepted = wait_for_listener("127.0.0.1", port, 300ms);
    return !accepted;  // accepted: someone else took the port meanwhile; try another
  }));
}

TEST(ListenerWait, GoesOnOnceAListenerOpensWhileItWaits) {
  ASSERT_TRUE(testing::with_free_port([](int port) {
    auto waiting = std::async(std::launch::async, [port] { return wait_for_listener("127.0.0.1", port, 60s); });
    const ListenerOn listener(port);
    if (!listener.ok()) {
      waiting.wait();
      return false;
    }
    EXPECT_TRUE(waiting.get()) << "no connection accepted within 60 s of waiting on port " << port;
    return true;
  }));
}

}  // namespace
}  // namespace tula::common
