#include "service/connection_stream.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tula::service {

using std::chrono::milliseconds;

ConnectionStream::ConnectionStream(common::Fd sock, const SocketEnds& ends, std::string buffered,
                                   milliseconds io_timeout)
    : sock_(std::move(sock)), ends_(ends), io_timeout_(io_timeout), buffer_(std::move(buffered)) {}

short ConnectionStream::wait(short events, milliseconds limit) const {
  const auto until = Clock::now() + limit;
  for (;;) {
    pollfd p{sock_.get(), events, 0};
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
    const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (n > 0) return p.revents;
    if (n == 0 || errno != EINTR) return 0;
  }
}

std::optional<milliseconds> ConnectionStream::until_deadline() const {
  if (!deadline_) return std::nullopt;
  return std::max(milliseconds(0), std::chrono::ceil<milliseconds>(*deadline_ - Clock::now()));
}

void ConnectionStream::begin_request(Clock::time_point started, milliseconds limit) {
  started_ = started;
  deadline_ = started_ + limit;
  timed_out_ = false;
  written_ = 0;
  handed_ = 0;
  framing_.reset();
  framing_problem_.clear();
  hold_next_write_ = true;
}

void ConnectionStream::expect_chunked_body(size_t head_bytes) {
  framing_.emplace();
  body_from_ = head_bytes;
}

common::Fd ConnectionStream::release(std::string& unread) {
  flush();
  unread = buffer_.substr(begin_);
  buffer_.clear();
  begin_ = 0;
  return std::move(sock_);
}

bool ConnectionStream::is_readable() const {
  return begin_ < buffer_.size() || (wait(POLLIN, milliseconds(0)) & POLLIN);
}

bool ConnectionStream::is_writable() const {
  // A streamed answer asks before each part it writes, and may wait for the
  // part: its head goes now. (const for the library; the socket is not.)
  if (!const_cast<ConnectionStream*>(this)->flush()) return false;
  const short seen = wait(POLLOUT | POLLRDHUP, io_timeout_);
  return (seen & POLLOUT) && !(seen & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (!framing_problem_.empty() || !flush()) return -1;
  if (begin_ == buffer_.size()) {
    const auto left = until_deadline();
    if (left && left->count() == 0) timed_out_ = true;
    if (timed_out_) return -1;
    char chunk[4096];
    // What has arrived is taken at once; only an empty socket is waited on.
    ssize_t n = ::recv(sock_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const bool deadline_first = left && *left < io_timeout_;
      if (!(wait(POLLIN, deadline_first ? *left : io_timeout_) & (POLLIN | POLLHUP | POLLERR))) {
        timed_out_ = deadline_first;
        return -1;
      }
      n = ::recv(sock_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    }
    if (n <= 0) return n;
    buffer_.assign(chunk, static_cast<size_t>(n));
    begin_ = 0;
  }
  const size_t n = std::min(size, buffer_.size() - begin_);
  if (framing_ && handed_ + n > body_from_) {
    const size_t skip = handed_ < body_from_ ? body_from_ - handed_ : 0;
    if (!framing_->take(std::string_view(buffer_).substr(begin_ + skip, n - skip))) {
      framing_problem_ = framing_->problem();
      return -1;
    }
  }
  std::memcpy(ptr, buffer_.data() + begin_, n);
  begin_ += n;
  handed_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (hold_next_write_) {
    hold_next_write_ = false;
    if (size <= held_.size()) {
      std::memcpy(held_.data(), ptr, size);
      held_size_ = size;
      written_ += size;
      return static_cast<ssize_t>(size);
    }
  }
  if (held_size_ > 0) {
    const ssize_t n = send_held(ptr, size);
    if (n != 0 || size == 0) return n;
  }
  // Room in the socket's buffer is the rule: wait only when there is none.
  ssize_t n = ::send(sock_.get(), ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    if (!(wait(POLLOUT, io_timeout_) & POLLOUT)) return -1;
    n = ::send(sock_.get(), ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  if (n > 0) written_ += static_cast<size_t>(n);
  return n;
}

ssize_t ConnectionStream::send_held(const char* ptr, size_t size) {
  while (held_size_ > 0) {
    iovec parts[2] = {{held_.data(), held_size_}, {const_cast<char*>(ptr), size}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = size > 0 ? 2 : 1;
    const ssize_t n = ::sendmsg(sock_.get(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!(wait(POLLOUT, io_timeout_) & POLLOUT)) return -1;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    const auto sent = static_cast<size_t>(n);
    if (sent < held_size_) {
      std::memmove(held_.data(), held_.data() + sent, held_size_ - sent);
      held_size_ -= sent;
      continue;
    }
    const size_t of_ptr = sent - held_size_;
    held_size_ = 0;
    written_ += of_ptr;
    return static_cast<ssize_t>(of_ptr);
  }
  return 0;
}

bool ConnectionStream::flush() {
  return held_size_ == 0 || send_held(nullptr, 0) == 0;
}

bool ConnectionStream::write_all(const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = write(data.data() + done, data.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void ConnectionStream::close(milliseconds linger) {
  if (!sock_) return;
  flush();
  ::shutdown(sock_.get(), SHUT_WR);
  // Closing with unread bytes would reset the connection, and the client
  // could lose the answer (a 413 while it still sends its body): what is
  // here is read and dropped at once, what comes within `linger` too. At
  // most 8 MiB, about what the socket buffers of both ends hold: a client
  // that sends on after the answer gets its reset.
  const auto until = Clock::now() + linger;
  std::array<char, 16384> drop{};
  for (size_t dropped = 0; dropped < (8u << 20);) {
    const auto left = std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(until - Clock::now()));
    if (!(wait(POLLIN, left) & (POLLIN | POLLHUP | POLLERR))) break;
    const ssize_t n = ::recv(sock_.get(), drop.data(), drop.size(), 0);
    if (n <= 0) break;
    dropped += static_cast<size_t>(n);
  }
  sock_.reset();
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = ends_.peer.ip;
  port = ends_.peer.port;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip = ends_.local.ip;
  port = ends_.local.port;
}

}  // namespace tula::service
