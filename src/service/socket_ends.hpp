// The two ends of a connected socket, read once when it is accepted: the
// HTTP library asks for them with every request, and a keep-alive
// connection would otherwise pay two system calls a request for them.
// No LibTorch here.
#pragma once
#include <string>

namespace tula::service {

struct SocketEnd {
  std::string ip;  // an IPv4 address without the "::ffff:" of a dual-stack socket
  int port = -1;
};

struct SocketEnds {
  SocketEnd peer, local;
};

// Both ends of `sock` (an end that cannot be read has ip "" and port -1).
SocketEnds socket_ends(int sock);

}  // namespace tula::service
