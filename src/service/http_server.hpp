// The HTTP server of `tula serve`: cpp-httplib's request reading and routing,
// with the connections handled here rather than by the library's thread per
// connection:
//  - the library's accept loop puts each connection at once among the
//    connections waiting between requests (head_wait.hpp), which one idle
//    request thread at a time watches (epoll), reading each request's head
//    as it comes: a slow or idle client holds no request thread, and the
//    head is checked to RFC 9112 and its caps (bytes, lines) before the
//    library parses it; the thread watching when a request comes whole
//    serves it itself, and another idle one takes over the watch;
//  - connections over the cap of one address (429) or of all together (503,
//    Retry-After) are answered and closed at once;
//  - a request thread serves one request whose head is whole, with a
//    deadline for the whole request (head and body) and one for each read,
//    then puts the connection back among those waiting;
//  - a request without Content-Length or Transfer-Encoding has no body
//    (the library would read one until the client closes);
//  - a request that had a body is the last of its connection: whatever
//    refused it may have left part of the body unread, and reading on would
//    take those bytes for the next request;
//  - a handler may hand the connection on once its answer has begun (an
//    event stream goes to the event pump), freeing the request thread.
// No LibTorch here.
#pragma once
#include <httplib.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/fd.hpp"

#include "service/client_counts.hpp"
#include "service/head_wait.hpp"

namespace tula::service {

class ConnectionStream;

// "15 s": the request deadline, for messages.
std::string deadline_text(const ConnectionLimits& limits);

class GuardedServer : public httplib::Server {
 public:
  GuardedServer(ConnectionLimits limits, int threads);
  ~GuardedServer() override;
  const ConnectionLimits& limits() const { return limits_; }
  // Stops listening, closes the waiting connections and waits for the request threads.
  void stop_serving();
  // After binding: a listen backlog for bursts of connections (SOMAXCONN).
  void widen_backlog();

 protected:
  // Called on the accept loop's thread: takes the connection's place and
  // hands it to a request thread where its first request is here already,
  // else among the connections waiting; or refuses it.
  bool process_and_close_socket(socket_t sock) override;

 private:
  // One request of `c`, on a request thread; the connection goes back to
  // waiting when it may carry another.
  void serve(std::unique_ptr<Connection> c);
  // True when the request ended in the middle (a body refused or not read,
  // a deadline passed), where the client may still be sending.
  // `last`: the connection ends after it; `next` is set when it may carry another.
  bool serve_request(ConnectionStream& stream, size_t head_bytes, bool last, bool& next);
  // True when `c`'s next request has come whole and well formed, without a
  // body still to come, within `wait`: it is served on a request thread at
  // once, without going back to wait among the others. After an
  // answer (a keep-alive client's next request is often on its way already)
  // the request thread waits kNextHeadWait; on the accept thread nothing is
  // waited for (a client that sent its request right after connecting may
  // have it there already; most often it comes a little later). Bytes read
  // go with the connection either way.
  bool head_here(Connection& c, std::chrono::nanoseconds wait) const;
  // 2 ms: at 0.5 ms, ten busy keep-alive clients on two cores often asked
  // again just after it, and went back among those waiting (docs/api.md).
  // A request thread waits this long at most after each answer it writes.
  static constexpr std::chrono::nanoseconds kNextHeadWait{2'000'000};

  bool listening() const { return svr_sock_ != INVALID_SOCKET; }

  ConnectionLimits limits_;
  ClientCounts clients_;
  std::unique_ptr<HeadWait> waiting_;
  std::vector<std::thread> request_threads_;  // each serves what HeadWait::next_ready gives it
  std::once_flag stopped_;
};

// Ends the connection of the request this thread serves once it is
// answered (the handler also says `Connection: close`): for a refusal after
// which a client should go away rather than hold a connection idle.
void end_connection_after_answer();

// After this request's answer (as far as it was written), hands its
// connection to `take` instead of ending it or waiting for the next request:
// for an answer that goes on without a request thread (an event stream,
// event_pump.hpp). `take` gets the socket and the connection's place among
// the client caps, which it holds until it closes the socket; a request sent
// after this one on the connection is not read.
using ConnectionTaker = std::function<void(common::Fd sock, std::shared_ptr<void> place)>;
void hand_off_connection_after_answer(ConnectionTaker take);

// True while this thread serves a request whose headers or body did not
// come before the request's deadline (for the answer to say so: 408).
bool request_timed_out();

// Why this thread's request's chunked body was refused ("": it was not).
std::string request_framing_problem();

// Seconds since the request this thread serves began (its first byte came).
double request_seconds();

}  // namespace tula::service
