// One client connection of the server, as the HTTP library reads and writes
// it, for one request whose head has come whole (head_wait.hpp). Unlike the
// library's own stream it has a deadline for a whole request (headers and
// body: a client that sends a byte now and then cannot hold a request thread
// for longer), checks a chunked body's framing as the library reads it
// (chunked_framing.hpp), counts what it wrote for each request, and tells a
// response that streams (an event stream) that the client has gone, at once
// rather than at the next failed write. No LibTorch here.
#pragma once
#include <httplib.h>

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>

#include "common/fd.hpp"
#include "service/chunked_framing.hpp"
#include "service/socket_ends.hpp"

namespace tula::service {

class ConnectionStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes the socket, its ends (read when it was accepted; they must outlive
  // the stream) and the bytes already read from it; `io_timeout` bounds each
  // read and write.
  ConnectionStream(common::Fd sock, const SocketEnds& ends, std::string buffered, std::chrono::milliseconds io_timeout);

  // Starts a request that began at `started`: reads fail once `limit` has passed from then.
  void begin_request(Clock::time_point started, std::chrono::milliseconds limit);
  // From the byte `head_bytes` on (the body), what is read must be chunked
  // framing: a read that would hand on anything else fails.
  void expect_chunked_body(size_t head_bytes);
  // Why the chunked body was refused ("": it was not).
  const std::string& framing_problem() const { return framing_problem_; }
  // Gives the socket and the bytes read but not yet handed on back (for
  // the connection's next request), after sending what is held; the stream
  // is closed after it.
  common::Fd release(std::string& unread);
  // Sends the answer's head where it is held (see write); false when the
  // client is gone or too slow.
  bool flush();
  // When the current request began (its first byte was here).
  Clock::time_point request_started() const { return started_; }
  // The request's headers or body did not come before its deadline.
  bool timed_out() const { return timed_out_; }
  // Bytes written for the current request (0: nothing answered yet).
  size_t written() const { return written_; }
  // Writes all of `data` (false when the client is gone or too slow).
  bool write_all(const std::string& data);
  // Ends the connection: tells the client (FIN), reads and drops what it
  // has sent, and what it still sends for at most `linger` (so that it reads
  // the answer rather than a reset), and closes. A linger is needed only
  // where the server stopped reading in the middle of a request.
  void close(std::chrono::milliseconds linger);

  bool is_readable() const override;
  // Writable within the write timeout, and the client has not closed its end.
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  // The first write of a request (the library writes the answer's head
  // apart from its body) is held and sent with the next write, in one call
  // and one segment; it goes alone when the stream is flushed, waited on
  // (is_writable, read) or released.
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_.get(); }

 private:
  // poll() for `events` within `limit`; the events seen (0: none in time).
  short wait(short events, std::chrono::milliseconds limit) const;
  // The time left to the request's deadline (none before the first request).
  std::optional<std::chrono::milliseconds> until_deadline() const;

  common::Fd sock_;
  const SocketEnds& ends_;
  std::chrono::milliseconds io_timeout_;
  Clock::time_point started_{};
  std::optional<Clock::time_point> deadline_;
  bool timed_out_ = false;
  size_t written_ = 0;
  std::string buffer_;
  size_t begin_ = 0;  // buffer_ from here on is not yet handed on
  size_t handed_ = 0;  // bytes handed on for this request
  std::optional<ChunkedFraming> framing_;
  size_t body_from_ = 0;  // where, in the bytes handed on, the chunked body begins
  std::string framing_problem_;
  bool hold_next_write_ = false;  // the request's first write is still to come
  // The answer's head, not sent yet (held_size_ bytes): in place, not
  // allocated, as every request has one; a larger head goes out alone.
  std::array<char, 2048> held_;
  size_t held_size_ = 0;

  // Sends held_ and then `ptr` (one sendmsg where both fit the socket's
  // buffer); the bytes of `ptr` sent, 0 when only held_ went, -1 on failure.
  ssize_t send_held(const char* ptr, size_t size);
};

}  // namespace tula::service
