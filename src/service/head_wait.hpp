// Where a connection waits for its next request's head and body: watched
// with every other such connection (epoll), so that a client that sends its
// head or body slowly, or keeps a connection open and idle, holds no request
// thread. The request threads take turns at watching (next_ready): the one
// watching when a request comes whole serves it itself, and the next idle
// one takes over the watch, so a request crosses no thread on its way. A
// body framed by Content-Length (at most ConnectionLimits::max_body) or
// chunked is read whole here before the request goes on, within a budget
// for all bodies held at once (over it: 503); one over the limit goes on at
// once, for the request thread to refuse unread (413). A head that is whole
// and well formed (request_head.hpp) goes to a request thread with the bytes
// read so far; one that is not whole before its deadline is answered 408,
// one too large 431, a malformed one 400, and the connection ends.
// Connections idle past the idle limit are closed. What each waiting
// connection holds is its head's bytes, at most HeadLimits::max_bytes (and a
// read's worth). No LibTorch here.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.hpp"
#include "service/chunked_framing.hpp"
#include "service/client_counts.hpp"
#include "service/request_head.hpp"
#include "service/socket_ends.hpp"

namespace tula::service {

struct ConnectionLimits {
  std::chrono::milliseconds request_deadline{15000};  // a request's headers and body, from its first byte
  std::chrono::milliseconds idle{5000};               // waiting for the next request of a connection
  std::chrono::milliseconds io{5000};                 // one read or write of a request thread
  int per_client = 8;                                 // connections one address holds at once
  int total = 1000;                                   // connections open at once, all clients together
  std::chrono::milliseconds linger{1000};             // reading what a refused client still sends, before closing
  HeadLimits head;
  size_t max_body = 1 << 20;                          // a request body (as the routes' limit)
  size_t body_budget = 64 << 20;                      // bodies held while they arrive, all connections together
};

// A client's connection between two requests.
struct Connection {
  using Clock = std::chrono::steady_clock;
  Connection(common::Fd s, SocketEnds e, std::unique_ptr<ClientCounts::Held> h)
      : sock(std::move(s)), ends(std::move(e)), held(std::move(h)) {}
  common::Fd sock;
  SocketEnds ends;                           // the client's address and ours
  std::unique_ptr<ClientCounts::Held> held;  // its place among the client's connections
  std::string buffered;                      // bytes of the next request read so far
  std::optional<Clock::time_point> started;  // when the request's first byte came
  size_t served = 0;                         // requests answered on it
  // Internal to HeadWait:
  Clock::time_point idle_until{};
  std::optional<Clock::time_point> closing_until;  // answered and closing: what comes is dropped
  size_t body_from = 0;                    // where the body begins in `buffered` (0: the head is not whole yet)
  uint64_t body_length = 0;                // its Content-Length
  std::optional<ChunkedFraming> chunked;   // a chunked body, checked as it comes
  size_t fed = 0;                          // the bytes of `buffered` the chunked framing has taken
  size_t reserved = 0;                     // bytes of the body budget it holds
};

class HeadWait {
 public:
  explicit HeadWait(ConnectionLimits limits);
  ~HeadWait();
  HeadWait(const HeadWait&) = delete;
  HeadWait& operator=(const HeadWait&) = delete;

  // A connection whose request's head (and body) is whole and well formed,
  // for the calling request thread to serve; while there is none, one
  // calling thread at a time watches the connections (the others wait for
  // their turn). Null once stopped.
  std::unique_ptr<Connection> next_ready();
  // Watches `c` (from any thread).
  void add(std::unique_ptr<Connection> c);
  // `c`'s request is whole already (read as it was accepted): the next
  // request thread takes it (from any thread).
  void add_ready(std::unique_ptr<Connection> c);
  // Answers `c` with `answer` and closes it after the linger (from any
  // thread): a connection refused as it was accepted, whose request may be
  // on its way (closing at once would reset it, and the client could lose
  // the answer).
  void refuse(std::unique_ptr<Connection> c, const std::string& answer);
  // next_ready returns null from now on, to every thread.
  void stop();
  // Closes every waiting connection (once no thread calls next_ready).
  void close_all();

 private:
  // One watch: the events of one epoll_wait (at most kTick), then the deadlines.
  void watch_once();
  void wake();
  // Watches `c` from now on; true when the bytes it came with hold a whole
  // request, which went to the ready connections.
  bool watch(std::unique_ptr<Connection> c);
  void read_from(Connection& c);
  // Hands `c` on when its head and body are whole; answers and closes it
  // when it is not well formed. False when it is no longer this thread's.
  bool head_done(int fd);
  // The head just came whole: how its body comes. False when `c` was answered.
  bool start_body(Connection& c, size_t head_end);
  // The body has all come (or goes on as it is: over the limit, or framed
  // wrong, for the request thread to refuse). Answers 503 when the budget is
  // spent; `c.closing_until` is then set.
  bool body_done(Connection& c);
  bool hand_on(int fd);  // to the ready connections; false
  bool reserve(Connection& c, size_t bytes);  // more of the body budget for `c`; false when spent
  void release(Connection& c);
  void expire(Connection::Clock::time_point now);
  void refuse(Connection& c, int status, const std::string& message);
  void drop(int fd);
  void return_memory();

  ConnectionLimits limits_;
  common::Fd epoll_, wake_;
  std::mutex watch_mutex_;  // held by the thread watching (in epoll_wait)
  std::mutex state_mutex_;  // over what follows, up to ready_mutex_
  std::map<int, std::unique_ptr<Connection>> waiting_;
  size_t freed_since_trim_ = 0;
  size_t body_reserved_ = 0;  // of limits_.body_budget, by the waiting connections
  Connection::Clock::time_point last_trim_{};
  std::mutex ready_mutex_;
  std::deque<std::unique_ptr<Connection>> ready_;  // to serve
  std::atomic<bool> stopping_ = false;
};

// The answer that ends a connection: status, a JSON error body, Connection: close
// (and Retry-After: 1 when `retry`), the security headers.
std::string closing_answer(int status, const std::string& message, bool retry);

}  // namespace tula::service
