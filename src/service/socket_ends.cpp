#include "service/socket_ends.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace tula::service {
namespace {

using EndGetter = int (*)(int, sockaddr*, socklen_t*);

SocketEnd end_of(int sock, EndGetter get) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  SocketEnd end;
  if (get(sock, reinterpret_cast<sockaddr*>(&a), &len) != 0) return end;
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    end.port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    end.port = ntohs(v6.sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
      ::inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof text);
    } else {
      ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    }
  }
  end.ip = text;
  return end;
}

}  // namespace

SocketEnds socket_ends(int sock) { return {end_of(sock, ::getpeername), end_of(sock, ::getsockname)}; }

}  // namespace tula::service
