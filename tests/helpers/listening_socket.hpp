// Who listens on a TCP port: a socket that holds one for a test, and a check
// that a server this process started is the one listening.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tula::testing {

// Listens on a loopback port the kernel picked, for as long as it lives: a
// port certainly in use, with no moment at which another process could take
// it first. Not inherited by child processes.
class ListeningSocket {
 public:
  ListeningSocket() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (fd_ < 0) throw std::runtime_error("ListeningSocket: socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd_);
      throw std::runtime_error("ListeningSocket: cannot listen on a loopback port");
    }
    port_ = ntohs(addr.sin_port);
  }
  ~ListeningSocket() { ::close(fd_); }
  ListeningSocket(const ListeningSocket&) = delete;
  ListeningSocket& operator=(const ListeningSocket&) = delete;

  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

// The inode of a socket listening on TCP `port` in this network namespace,
// from a /proc/net/tcp-style table, or "" when there is none.
inline std::string listening_socket_inode(const std::string& table, int port) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    const auto colon = local.rfind(':');
    if (state != "0A" || colon == std::string::npos) continue;  // 0A: LISTEN
    if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) return inode;
  }
  return "";
}

// True when a socket of this process listens on `port`: the server it
// started is up, and it is the one a client connecting to the port meets.
inline bool this_process_listens_on(int port) {
  for (const char* table : {"/proc/net/tcp6", "/proc/net/tcp"}) {
    const std::string inode = listening_socket_inode(table, port);
    if (inode.empty()) continue;
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
      std::error_code gone;  // an fd closed since it was listed
      if (std::filesystem::read_symlink(fd.path(), gone).string() == "socket:[" + inode + "]") return true;
    }
  }
  return false;
}

}  // namespace tula::testing
