// Ports for a rendezvous on this machine: which one is free, and whether
// somebody listens on one. No LibTorch.
#pragma once
#include <netinet/in.h>

#include <string>

namespace tula::common {

// `address`:`port` as a socket address; an address that is not IPv4 text means loopback.
sockaddr_in ipv4_address(const std::string& address, int port);

// A TCP port on `address` that nobody listens on right now (another process
// may still take it before it is bound). Throws std::runtime_error when none
// can be found.
int free_tcp_port(const std::string& address = "127.0.0.1");

}  // namespace tula::common
