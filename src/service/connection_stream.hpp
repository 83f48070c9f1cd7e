// One client connection of the server, as the HTTP library reads and writes
// it. Unlike the library's own stream it has a deadline for a whole
// request (headers and body: a client that sends a byte now and then cannot
// hold a request thread for longer), counts what it wrote for each request,
// and tells a response that streams (an event stream) that the client has
// gone, at once rather than at the next failed write. No LibTorch here.
#pragma once
#include <httplib.h>

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "common/fd.hpp"

namespace tula::service {

class ConnectionStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes the socket; `io_timeout` bounds each read and write.
  ConnectionStream(int sock, std::chrono::milliseconds io_timeout);

  // The client's address (an IPv4 one without the "::ffff:" of a dual-stack socket).
  const std::string& peer_address() const { return peer_.ip; }

  // Waits until the next request's first byte is here (true), or until
  // `idle` has passed, the client closed, or stop() holds (false).
  bool wait_for_request(std::chrono::milliseconds idle, const std::function<bool()>& stop);
  // Starts a request: reads fail once `limit` has passed from now.
  void begin_request(std::chrono::milliseconds limit);
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
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_.get(); }

 private:
  // poll() for `events` within `limit`; the events seen (0: none in time).
  short wait(short events, std::chrono::milliseconds limit) const;
  // The time left to the request's deadline (none before the first request).
  std::optional<std::chrono::milliseconds> until_deadline() const;

  // The two ends' addresses, read once: the library asks for them with
  // every request.
  struct Address {
    std::string ip;
    int port = -1;
  };
  // One end's address, by getpeername or getsockname.
  using EndGetter = int (*)(int, sockaddr*, socklen_t*);
  static Address end_of(int sock, EndGetter get);

  common::Fd sock_;
  Address peer_, local_;
  std::chrono::milliseconds io_timeout_;
  Clock::time_point started_{};
  std::optional<Clock::time_point> deadline_;
  bool timed_out_ = false;
  size_t written_ = 0;
  std::array<char, 4096> buffer_{};
  size_t begin_ = 0, end_ = 0;  // unread bytes of buffer_
};

}  // namespace tula::service
