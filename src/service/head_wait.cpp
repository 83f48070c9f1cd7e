#include "service/head_wait.hpp"

#include <strings.h>

#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <stdexcept>

#include <fmt/format.h>

#include "common/text.hpp"
#include "service/response_headers.hpp"

namespace tula::service {
namespace {

using std::chrono::milliseconds;
using Clock = Connection::Clock;

// How often the watching thread looks at the deadlines, at the least.
constexpr milliseconds kTick{100};
// Freed head buffers worth giving back to the system (malloc_trim), at most once a second.
constexpr size_t kTrimAfterBytes = 1 << 20;

// `bytes` with the head's (ending at `head_end`) Expect lines taken out;
// returns where the head ends now.
size_t strip_expect_line(std::string& bytes, size_t head_end) {
  size_t at = bytes.find("\r\n") + 2;  // past the request line
  while (at < head_end - 2) {
    const size_t eol = bytes.find("\r\n", at);
    if (eol - at >= 7 && ::strncasecmp(bytes.c_str() + at, "expect:", 7) == 0) {
      bytes.erase(at, eol + 2 - at);
      head_end -= eol + 2 - at;
      continue;
    }
    at = eol + 2;
  }
  return head_end;
}

const char* reason_of(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

}  // namespace

std::string closing_answer(int status, const std::string& message, bool retry) {
  const std::string body = error_body(status, message);
  std::string head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n", status,
      reason_of(status), body.size());
  if (retry) head += "Retry-After: 1\r\n";
  for (const auto& [name, value] : security_headers("", "application/json")) head += name + ": " + value + "\r\n";
  return head + "\r\n" + body;
}

HeadWait::HeadWait(ConnectionLimits limits)
    : limits_(limits), epoll_(::epoll_create1(EPOLL_CLOEXEC)), wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!epoll_ || !wake_) throw std::runtime_error("cannot watch connections (epoll or eventfd failed)");
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = wake_.get();
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &e);
}

HeadWait::~HeadWait() {
  stop();
  close_all();
}

void HeadWait::wake() {
  const uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_.get(), &one, sizeof one);
}

void HeadWait::add(std::unique_ptr<Connection> c) {
  bool ready = false;
  {
    const std::lock_guard state(state_mutex_);
    if (stopping_) return;  // closed as it goes
    ready = watch(std::move(c));
  }
  if (ready) wake();
}

void HeadWait::add_ready(std::unique_ptr<Connection> c) {
  {
    const std::lock_guard lock(ready_mutex_);
    if (stopping_) return;  // closed as it goes
    ready_.push_back(std::move(c));
  }
  wake();
}

void HeadWait::refuse(std::unique_ptr<Connection> c, const std::string& answer) {
  // Into the fresh socket's empty buffer: it fits, or the client is gone; never waited on.
  [[maybe_unused]] const auto n = ::send(c->sock.get(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(c->sock.get(), SHUT_WR);
  c->closing_until = Clock::now() + limits_.linger;
  add(std::move(c));
}

void HeadWait::stop() {
  stopping_ = true;
  wake();
}

void HeadWait::close_all() {
  const std::lock_guard turn(watch_mutex_);
  const std::lock_guard state(state_mutex_);
  const std::lock_guard lock(ready_mutex_);
  ready_.clear();
  waiting_.clear();
}

std::unique_ptr<Connection> HeadWait::next_ready() {
  const std::lock_guard turn(watch_mutex_);
  for (;;) {
    if (stopping_) return nullptr;
    {
      const std::lock_guard lock(ready_mutex_);
      if (!ready_.empty()) {
        auto c = std::move(ready_.front());
        ready_.pop_front();
        return c;
      }
    }
    watch_once();
  }
}

void HeadWait::watch_once() {
  std::array<epoll_event, 64> events{};
  const int n = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), static_cast<int>(kTick.count()));
  const std::lock_guard state(state_mutex_);
  for (int i = 0; i < n; ++i) {
    const int fd = events[static_cast<size_t>(i)].data.fd;
    if (fd == wake_.get()) {
      uint64_t count = 0;
      [[maybe_unused]] const auto r = ::read(wake_.get(), &count, sizeof count);
      continue;
    }
    const auto it = waiting_.find(fd);
    if (it == waiting_.end()) continue;
    read_from(*it->second);
  }
  expire(Clock::now());
  return_memory();
}

bool HeadWait::watch(std::unique_ptr<Connection> c) {
  const int fd = c->sock.get();
  c->idle_until = Clock::now() + limits_.idle;
  const bool pipelined = !c->buffered.empty();  // a request sent before the last answer, or read at accept
  waiting_[fd] = std::move(c);
  // Into the watching thread's epoll_wait as it waits: no need to wake it.
  epoll_event e{};
  e.events = EPOLLIN | EPOLLRDHUP;
  e.data.fd = fd;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &e) != 0) {
    drop(fd);
    return false;
  }
  if (!pipelined) return false;
  head_done(fd);
  return !waiting_.contains(fd);  // handed on
}

void HeadWait::read_from(Connection& c) {
  const int fd = c.sock.get();
  std::array<char, 16384> buffer;  // not zeroed: recv writes what is read
  // Never more than the head limit and one read: a head that has not ended by then is refused.
  for (int reads = 0; reads < 4; ++reads) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return drop(fd);  // the client closed, or reset
    if (c.closing_until) continue;  // answered: what it still sends is dropped
    if (!c.started) c.started = Clock::now();
    c.buffered.append(buffer.data(), static_cast<size_t>(n));
    if (!head_done(fd)) return;
  }
}

bool HeadWait::head_done(int fd) {
  Connection& c = *waiting_.at(fd);
  if (!c.started) c.started = Clock::now();
  if (c.body_from == 0) {
    const auto end = head_end(c.buffered);
    if (!end) {
      if (c.buffered.size() > limits_.head.max_bytes) {
        const auto problem = head_too_large(limits_.head);
        refuse(c, problem.status, problem.message);
        return false;
      }
      return true;  // more to come
    }
    if (const auto problem = check_head(std::string_view(c.buffered).substr(0, *end), limits_.head)) {
      refuse(c, problem->status, problem->message);
      return false;
    }
    if (!start_body(c, *end)) return false;
  }
  if (!body_done(c)) return !c.closing_until;
  return hand_on(fd);
}

bool HeadWait::start_body(Connection& c, size_t head_end) {
  const BodyFraming framing = body_framing(std::string_view(c.buffered).substr(0, head_end));
  c.body_from = head_end;
  c.fed = head_end;
  c.body_length = framing.chunked ? 0 : framing.length.value_or(0);
  if (framing.chunked) c.chunked.emplace();
  const bool body = framing.chunked || c.body_length > 0;
  if (body && framing.expects_continue && c.body_length <= limits_.max_body) {
    // The client waits for this before sending its body, which is read
    // here: say it now, and take the Expect line out, so that the library
    // does not say it again.
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    [[maybe_unused]] const auto n = ::send(c.sock.get(), kContinue.data(), kContinue.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    c.body_from = c.fed = strip_expect_line(c.buffered, head_end);
  }
  if (!framing.chunked && c.body_length > 0 && c.body_length <= limits_.max_body && !reserve(c, c.body_length)) {
    refuse(c, 503, "the server is receiving as many request bodies as it holds at once; try again");
    return false;
  }
  return true;
}

bool HeadWait::body_done(Connection& c) {
  const size_t have = c.buffered.size() - c.body_from;
  if (!c.chunked) return c.body_length > limits_.max_body || have >= c.body_length;
  if (have > limits_.max_body) return true;  // the request thread refuses it (413)
  if (!c.chunked->complete() && c.fed < c.buffered.size()) {
    const bool framed = c.chunked->take(std::string_view(c.buffered).substr(c.fed));
    c.fed = c.buffered.size();
    if (!framed) return true;  // the request thread answers the framing's problem (400)
  }
  if (c.chunked->complete()) return true;
  if (!reserve(c, have - std::min(have, c.reserved))) {
    refuse(c, 503, "the server is receiving as many request bodies as it holds at once; try again");
    return false;
  }
  return false;
}

bool HeadWait::reserve(Connection& c, size_t bytes) {
  if (body_reserved_ + bytes > limits_.body_budget) return false;
  body_reserved_ += bytes;
  c.reserved += bytes;
  return true;
}

void HeadWait::release(Connection& c) {
  body_reserved_ -= c.reserved;
  c.reserved = 0;
  c.body_from = c.fed = 0;
  c.body_length = 0;
  c.chunked.reset();
}

bool HeadWait::hand_on(int fd) {
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  auto node = waiting_.extract(fd);
  release(*node.mapped());
  const std::lock_guard lock(ready_mutex_);
  ready_.push_back(std::move(node.mapped()));
  return false;
}

void HeadWait::refuse(Connection& c, int status, const std::string& message) {
  const std::string answer = closing_answer(status, message, false);
  // One small answer into an empty socket buffer: it fits, or the client is gone.
  [[maybe_unused]] const auto n = ::send(c.sock.get(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(c.sock.get(), SHUT_WR);
  release(c);
  freed_since_trim_ += c.buffered.capacity();
  c.buffered = std::string();
  // Read on for a while, so that the client reads the answer rather than a reset.
  c.closing_until = Clock::now() + limits_.linger;
}

void HeadWait::expire(Clock::time_point now) {
  std::vector<int> ended;
  for (auto& [fd, c] : waiting_) {
    if (c->closing_until) {
      if (now >= *c->closing_until) ended.push_back(fd);
    } else if (c->started && now >= *c->started + limits_.request_deadline) {
      refuse(*c, 408, std::string(c->body_from == 0 ? "the request's head" : "the request's body") + " did not arrive within " +
                          common::format_seconds(std::chrono::duration<double>(limits_.request_deadline).count()));
    } else if (!c->started && now >= c->idle_until) {
      ended.push_back(fd);
    }
  }
  for (const int fd : ended) drop(fd);
}

void HeadWait::drop(int fd) {
  const auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  release(*it->second);
  freed_since_trim_ += it->second->buffered.capacity();
  waiting_.erase(it);
}

void HeadWait::return_memory() {
  // Heads freed are small blocks the allocator keeps; given back once enough have gone.
  const auto now = Clock::now();
  if (freed_since_trim_ < kTrimAfterBytes || now - last_trim_ < std::chrono::seconds(1)) return;
  ::malloc_trim(0);
  freed_since_trim_ = 0;
  last_trim_ = now;
}

}  // namespace tula::service
