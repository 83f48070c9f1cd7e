// The HTTP server of `tula serve`: cpp-httplib's, except that each
// connection is served here (ConnectionStream) rather than by the library,
// so that
//  - a request's headers and body must arrive within a deadline, whatever
//    pace the client keeps (the library only bounds each read);
//  - one client address holds at most a few connections at once, so that a
//    few slow clients cannot take every request thread;
//  - a request without Content-Length or Transfer-Encoding has no body
//    (the library would read one until the client closes);
//  - a request that had a body is the last of its connection: whatever
//    refused it may have left part of the body unread, and reading on would
//    take those bytes for the next request.
// No LibTorch here.
#pragma once
#include <httplib.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace tula::service {

class ConnectionStream;

struct ConnectionLimits {
  std::chrono::milliseconds request_deadline{15000};  // a request's headers and body, from its first byte
  std::chrono::milliseconds idle{5000};               // waiting for the next request of a connection
  std::chrono::milliseconds io{5000};                 // one read or write
  int per_client = 8;                                 // connections one address holds at once
  std::chrono::milliseconds linger{1000};             // reading what a refused client still sends, before closing
};

// "15 s": the request deadline, for messages.
std::string deadline_text(const ConnectionLimits& limits);

// How many connections each client address holds.
class ClientConnections {
 public:
  explicit ClientConnections(int per_client) : per_client_(per_client) {}
  bool take(const std::string& client);  // false when it holds per_client already
  void give_back(const std::string& client);

  // One connection of a client, held for as long as this lives (when the
  // client had one left: see operator bool).
  class Held {
   public:
    Held(ClientConnections& all, std::string client) : all_(all), client_(std::move(client)), held_(all.take(client_)) {}
    ~Held() {
      if (held_) all_.give_back(client_);
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    explicit operator bool() const { return held_; }
    const std::string& client() const { return client_; }

   private:
    ClientConnections& all_;
    std::string client_;
    bool held_;
  };

 private:
  int per_client_;
  std::mutex mutex_;
  std::map<std::string, int> held_;
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits);
  const ConnectionLimits& limits() const { return limits_; }

 protected:
  bool process_and_close_socket(socket_t sock) override;

 private:
  // The connection's requests in turn; true when it ends in the middle of
  // one (a body refused or not read, a deadline passed), where the client
  // may still be sending.
  bool serve_requests(ConnectionStream& stream);
  bool listening() const { return svr_sock_ != INVALID_SOCKET; }

  ConnectionLimits limits_;
  ClientConnections clients_;
};

// True while this thread serves a request whose headers or body did not
// come before the request's deadline (for the answer to say so: 408).
bool request_timed_out();

// Seconds since the request this thread serves began (its first byte came).
double request_seconds();

}  // namespace tula::service
