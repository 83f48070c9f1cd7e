// TCP ports for tests that start a rendezvous server.
#pragma once
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace tula::testing {

// A TCP port nobody listens on at the moment of the call.
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("free_port: socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("free_port: no port to bind");
  return ntohs(addr.sin_port);
}

// True when an error message of the rendezvous says its port was taken.
inline bool says_port_in_use(const std::string& message) {
  return message.find("in use") != std::string::npos;
}

// A port from free_port() is free only when it is picked: under ctest -j
// another test may bind it before the code under test does. Runs
// attempt(port) with a fresh port each time until it returns true; an
// attempt returns false when its port turned out to be taken, so that
// only a run on a port of its own is judged.
template <class Attempt>
::testing::AssertionResult with_free_port(Attempt attempt, int tries = 5) {
  for (int i = 0; i < tries; ++i) {
    if (attempt(free_port())) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "each of " << tries << " free ports was taken by someone else before it was used";
}

}  // namespace tula::testing
