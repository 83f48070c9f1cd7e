#include "common/tcp_port.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <thread>

namespace tula::common {

sockaddr_in ipv4_address(const std::string& address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

int free_tcp_port(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("cannot open a socket to find a free port");
  sockaddr_in addr = ipv4_address(address, 0);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot find a free TCP port on " + address);
  return ntohs(addr.sin_port);
}

namespace {

// One non-blocking connection attempt to `target`, given at most `wait` to be
// accepted.
bool accepts(const addrinfo& target, std::chrono::milliseconds wait) {
  const int fd = ::socket(target.ai_family, target.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, target.ai_protocol);
  if (fd < 0) return false;
  bool ok = ::connect(fd, target.ai_addr, target.ai_addrlen) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof error;
    ok = ::poll(&p, 1, static_cast<int>(wait.count())) == 1 &&
         ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
  }
  ::close(fd);
  return ok;
}

}  // namespace

bool wait_for_listener(const std::string& host, int port, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string service = std::to_string(port);
  for (;;) {
    // Resolved on every try: a name may not resolve until its host is up.
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) == 0) {
      for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (accepts(*a, std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(1000)))) {
          ::freeaddrinfo(found);
          return true;
        }
      }
      ::freeaddrinfo(found);
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace tula::common
