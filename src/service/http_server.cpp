#include "service/http_server.hpp"

#include <fmt/format.h>

#include "common/text.hpp"
#include "service/connection_stream.hpp"
#include "service/response_headers.hpp"

namespace tula::service {

namespace {

// The connection this thread serves: the library calls the handlers on the
// thread that reads the request, and gives them no way to reach it.
thread_local const ConnectionStream* t_serving = nullptr;

class Serving {
 public:
  explicit Serving(const ConnectionStream& stream) { t_serving = &stream; }
  ~Serving() { t_serving = nullptr; }
  Serving(const Serving&) = delete;
  Serving& operator=(const Serving&) = delete;
};

// An answer written before (or instead of) the library's: the connection
// ends after it.
std::string refusal(int status, const std::string& message, bool retry) {
  const std::string body = error_body(status, message);
  const char* reason = status == 408 ? "Request Timeout" : status == 429 ? "Too Many Requests" : "Error";
  std::string head = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n", status,
      reason, body.size());
  if (retry) head += "Retry-After: 1\r\n";
  for (const auto& [name, value] : security_headers("", "application/json")) head += name + ": " + value + "\r\n";
  return head + "\r\n" + body;
}

bool has_body(const httplib::Request& req) {
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

}  // namespace

std::string deadline_text(const ConnectionLimits& limits) {
  return common::format_seconds(std::chrono::duration<double>(limits.request_deadline).count());
}

bool ClientConnections::take(const std::string& client) {
  std::lock_guard lock(mutex_);
  int& held = held_[client];
  if (held >= per_client_) return false;
  ++held;
  return true;
}

void ClientConnections::give_back(const std::string& client) {
  std::lock_guard lock(mutex_);
  if (--held_[client] <= 0) held_.erase(client);
}

GuardedServer::GuardedServer(ConnectionLimits limits) : limits_(limits), clients_(limits.per_client) {}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  ConnectionStream stream(sock, limits_.io);
  const ClientConnections::Held held(clients_, stream.peer_address());
  if (!held) {
    stream.write_all(refusal(429,
                             fmt::format("too many connections from {} at once (at most {}); close some and try again",
                                         held.client(), limits_.per_client),
                             true));
    stream.close(std::chrono::milliseconds(0));
    return false;
  }
  bool unread = false;
  {
    const Serving serving(stream);
    unread = serve_requests(stream);
  }
  stream.close(unread ? limits_.linger : std::chrono::milliseconds(0));
  return true;
}

bool GuardedServer::serve_requests(ConnectionStream& stream) {
  for (size_t left = keep_alive_max_count_; left > 0 && listening(); --left) {
    if (!stream.wait_for_request(limits_.idle, [this] { return !listening(); })) return false;
    stream.begin_request(limits_.request_deadline);
    bool last = left == 1;
    bool client_closes = false;
    bool with_body = false;
    const bool answered = process_request(stream, last, client_closes, [&](httplib::Request& req) {
      with_body = has_body(req);
      if (with_body) {
        last = true;
        req.headers.erase("Connection");  // and the answer says so
        req.set_header("Connection", "close");
      }
      // A request without either has no body (RFC 9112, 6.3).
      if (!req.has_header("Transfer-Encoding") && !req.has_header("Content-Length")) req.set_header("Content-Length", "0");
    });
    if (!answered && stream.timed_out() && stream.written() == 0) {
      stream.write_all(refusal(408, "the request did not arrive within " + deadline_text(limits_), false));
    }
    // After a timeout the rest of the request may still come: it is no next request.
    if (!answered || stream.timed_out()) return true;
    // A body may have been refused unread (413, 415, ...): the client may still be sending it.
    if (client_closes || last) return with_body;
  }
  return false;
}

bool request_timed_out() { return t_serving != nullptr && t_serving->timed_out(); }

double request_seconds() {
  if (t_serving == nullptr) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_serving->request_started()).count();
}

}  // namespace tula::service
