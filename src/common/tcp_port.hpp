// Ports for a rendezvous: which one is free on this machine, and waiting
// until somebody listens on one. No LibTorch.
#pragma once
#include <netinet/in.h>

#include <chrono>
#include <string>

namespace tula::common {

// `address`:`port` as a socket address; an address that is not IPv4 text means loopback.
sockaddr_in ipv4_address(const std::string& address, int port);

// A TCP port on `address` that nobody listens on right now (another process
// may still take it before it is bound). Throws std::runtime_error when none
// can be found.
int free_tcp_port(const std::string& address = "127.0.0.1");

// Waits until a TCP connection to `host`:`port` (a name or an address) is
// accepted, trying again every few milliseconds while it is refused; false
// when none was by `timeout`. The accepted probe is closed at once. Why: a
// worker that reaches c10d's TCPStore before rank 0 has opened it is refused
// and then sleeps a whole second before its next try (LibTorch 1.13), which
// every multi-process start lost about as often as not.
bool wait_for_listener(const std::string& host, int port, std::chrono::milliseconds timeout);

}  // namespace tula::common
