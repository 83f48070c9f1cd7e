// The HTTP side of `tula serve` in the test's own process, on a free
// loopback port, over a fresh store in a temporary directory; its queue is
// never started, so submitted jobs stay queued. And a raw client
// connection, for what a well-behaved client library would not send.
#pragma once
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "common/fd.hpp"
#include "helpers/temp_dir.hpp"
#include "service/api.hpp"
#include "service/http_service.hpp"

namespace tula::service::testing {

using namespace std::chrono_literals;

class InProcessServer {
 public:
  // `adjust` may change the context (limits) before the server starts.
  explicit InProcessServer(HttpOptions http = loopback(), const std::function<void(ApiContext&)>& adjust = {})
      : store_((dir_.path() / "jobs.db").string()),
        supervisor_(store_, events_, reports_, supervisor_options(dir_)),
        context_{store_, events_, reports_, supervisor_, metrics_, SpecRules{{(dir_.path() / "data").string()}, "local"}} {
    if (adjust) adjust(context_);
    http_.emplace(std::move(http), context_);
    port_ = http_->bind();
    thread_ = std::thread([this] { http_->listen(); });
  }
  ~InProcessServer() {
    context_.stopping = true;
    http_->stop();
    thread_.join();
  }
  InProcessServer(const InProcessServer&) = delete;
  InProcessServer& operator=(const InProcessServer&) = delete;

  static HttpOptions loopback() {
    HttpOptions h;
    h.listen = {"127.0.0.1", 0};
    h.loopback = true;
    h.threads = 8;
    return h;
  }

  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  Store& store() { return store_; }
  EventLog& events() { return events_; }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60);
    c.set_connection_timeout(60);
    return c;
  }

 private:
  static SupervisorOptions supervisor_options(const tula::testing::TempDir& dir) {
    SupervisorOptions so;
    so.workdir = (dir.path() / "work").string();
    so.tula_binary = "/bin/false";  // never run: the queue is not started
    return so;
  }

  tula::testing::TempDir dir_{"tula-http"};
  Store store_;
  EventLog events_;
  ReportCache reports_;
  Supervisor supervisor_;
  RequestMetrics metrics_;
  ApiContext context_;
  std::optional<HttpService> http_;
  int port_ = 0;
  std::thread thread_;
};

// A TCP connection to the server, byte by byte as the test writes it.
class RawConnection {
 public:
  // From `source` (another loopback address stands for another client).
  explicit RawConnection(int port, const std::string& source = "127.0.0.1")
      : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    connected_ = fd_ && ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&from), sizeof from) == 0 &&
                 ::connect(fd_.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  bool connected() const { return connected_; }

  // False once the server has closed the connection (or reset it).
  bool send(const std::string& data) {
    for (size_t done = 0; done < data.size();) {
      const ssize_t n = ::send(fd_.get(), data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // True when the server has sent something (or closed) within `wait`.
  bool readable(std::chrono::milliseconds wait = 0ms) const {
    pollfd p{fd_.get(), POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
  }
  // The poll() events among `events` seen within `wait` (0: none).
  short wait_for(short events, std::chrono::milliseconds wait) const {
    pollfd p{fd_.get(), events, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0 ? p.revents : 0;
  }
  // Sends what the socket takes now without blocking: the bytes sent (0:
  // none fit), or -1 once the server has closed.
  ssize_t send_some(const std::string& data) {
    const ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return n <= 0 ? -1 : n;
  }
  // One answer: its head, and as much body as Content-Length says; "" when
  // the connection ends (or `patience` passes) before a whole head came.
  std::string answer(std::chrono::milliseconds patience = 60s) {
    const auto until = std::chrono::steady_clock::now() + patience;
    std::string got;
    for (;;) {
      const auto head_end = got.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const auto at = got.find("Content-Length: ");
        const size_t length = at == std::string::npos || at > head_end ? 0 : std::stoul(got.substr(at + 16));
        if (got.size() >= head_end + 4 + length) return got.substr(0, head_end + 4 + length);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !readable(left)) return "";
      char buffer[4096];
      const ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
      if (n <= 0) return got.find("\r\n\r\n") == std::string::npos ? "" : got;
      got.append(buffer, static_cast<size_t>(n));
    }
  }
  // True once the server closed the connection (EOF or reset), waiting at most `patience`.
  bool closed_by_server(std::chrono::milliseconds patience = 60s) {
    const auto until = std::chrono::steady_clock::now() + patience;
    char buffer[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !readable(left)) return false;
      if (::recv(fd_.get(), buffer, sizeof buffer, 0) <= 0) return true;
    }
  }
  void close() { fd_.reset(); }
  // Everything received so far on this connection by read_until, reading on
  // until `part` is among it (or the server closes, or `patience` passes).
  const std::string& read_until(const std::string& part, std::chrono::milliseconds patience = 60s) {
    const auto until = std::chrono::steady_clock::now() + patience;
    while (received_.find(part) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !readable(left)) break;
      char buffer[4096];
      const ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
      if (n <= 0) break;
      received_.append(buffer, static_cast<size_t>(n));
    }
    return received_;
  }

 private:
  common::Fd fd_;
  bool connected_ = false;
  std::string received_;
};

// The status of an answer's first line ("HTTP/1.1 413 ..." -> 413; 0 for none).
inline int status_of(const std::string& answer) {
  return answer.size() > 12 && answer.compare(0, 5, "HTTP/") == 0 ? std::stoi(answer.substr(9, 3)) : 0;
}

}  // namespace tula::service::testing
