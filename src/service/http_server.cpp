#include "service/http_server.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include <fmt/format.h>

#include "common/text.hpp"
#include "service/connection_stream.hpp"
#include "service/request_head.hpp"

namespace tula::service {

namespace {

// The connection this thread serves: the library calls the handlers on the
// thread that reads the request, and gives them no way to reach it.
thread_local const ConnectionStream* t_serving = nullptr;
// Set by a handler whose answer is the connection's last (end_connection_after_answer).
thread_local bool t_end_after = false;
// Set by a handler whose connection goes on elsewhere (hand_off_connection_after_answer).
thread_local ConnectionTaker t_hand_off;

class Serving {
 public:
  explicit Serving(const ConnectionStream& stream) { t_serving = &stream; }
  ~Serving() { t_serving = nullptr; }
  Serving(const Serving&) = delete;
  Serving& operator=(const Serving&) = delete;
};

// Runs what the accept loop hands on at once, on its own thread: handing a
// connection to those waiting takes no time, and a thread pool here
// would only queue connections behind one another.
class OnTheAcceptThread final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

bool has_body(const httplib::Request& req) {
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

}  // namespace

std::string deadline_text(const ConnectionLimits& limits) {
  return common::format_seconds(std::chrono::duration<double>(limits.request_deadline).count());
}

GuardedServer::GuardedServer(ConnectionLimits limits, int threads)
    : limits_(limits), clients_(limits.per_client, limits.total),
      waiting_(std::make_unique<HeadWait>(limits)) {
  new_task_queue = [] { return new OnTheAcceptThread; };
  for (int i = 0; i < std::max(1, threads); ++i) {
    request_threads_.emplace_back([this] {
      while (auto c = waiting_->next_ready()) serve(std::move(c));
    });
  }
}

GuardedServer::~GuardedServer() { stop_serving(); }

void GuardedServer::widen_backlog() {
  // cpp-httplib listens with a backlog of 5: a burst of connections beyond it
  // waits for the client's SYN to be sent again (a second), however idle the
  // server is. Listening again on the bound socket only changes the backlog.
  if (listening()) ::listen(svr_sock_, SOMAXCONN);
}

void GuardedServer::stop_serving() {
  std::call_once(stopped_, [this] {
    stop();
    waiting_->stop();
    // The requests under way end (event streams see the server stopping).
    for (auto& t : request_threads_) t.join();
    waiting_->close_all();
  });
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  common::Fd fd(sock);
  SocketEnds ends = socket_ends(sock);
  auto held = std::make_unique<ClientCounts::Held>(clients_, ends.peer.ip);
  if (held->taken() != ClientCounts::Taken::Yes) {
    const bool client = held->taken() == ClientCounts::Taken::ClientFull;
    const std::string answer =
        client ? closing_answer(429,
                                fmt::format("too many connections from {} at once (at most {}); close some and try again",
                                            held->client(), limits_.per_client),
                                true)
               : closing_answer(503, fmt::format("the server holds {} connections, its most; try again", limits_.total),
                                true);
    // Its place is not taken: it only lingers until the client has read the answer.
    waiting_->refuse(std::make_unique<Connection>(std::move(fd), std::move(ends), nullptr), answer);
    return false;
  }
  auto c = std::make_unique<Connection>(std::move(fd), std::move(ends), std::move(held));
  if (head_here(*c, std::chrono::nanoseconds(0))) {
    waiting_->add_ready(std::move(c));
  } else {
    waiting_->add(std::move(c));
  }
  return true;
}

void GuardedServer::serve(std::unique_ptr<Connection> c) {
  // Requests of one connection, on this thread while the next one's head
  // comes whole right after each answer (head_here), else back among the
  // connections waiting.
  for (;;) {
    const size_t head_bytes = head_end(c->buffered).value_or(0);
    const auto started = c->started.value_or(Connection::Clock::now());
    ConnectionStream stream(std::move(c->sock), c->ends, std::move(c->buffered), limits_.io);
    stream.begin_request(started, limits_.request_deadline);
    bool next = false;
    bool unread = false;
    {
      const Serving serving(stream);
      // The connection's last request says so in its answer (Connection: close).
      const bool last = c->served + 1 >= keep_alive_max_count_ || !listening();
      t_end_after = false;
      t_hand_off = nullptr;
      unread = serve_request(stream, head_bytes, last, next);
      if (!stream.flush()) next = false;  // an answer without a body is still held
      if (t_end_after) next = false;
    }
    ++c->served;
    if (t_hand_off) {
      const ConnectionTaker take = std::move(t_hand_off);
      t_hand_off = nullptr;
      std::string unread_bytes;  // a request after this one: not read
      take(stream.release(unread_bytes), std::shared_ptr<ClientCounts::Held>(std::move(c->held)));
      return;
    }
    if (!next) {
      stream.close(unread ? limits_.linger : std::chrono::milliseconds(0));
      return;
    }
    c->sock = stream.release(c->buffered);
    c->started.reset();
    if (!head_here(*c, kNextHeadWait)) {
      waiting_->add(std::move(c));
      return;
    }
  }
}

bool GuardedServer::head_here(Connection& c, std::chrono::nanoseconds wait) const {
  if (!head_end(c.buffered)) {
    std::array<char, 16384> buffer;  // not zeroed: a request's worth of memset for bytes recv overwrites
    ssize_t n = ::recv(c.sock.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);  // here already: no wait
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait.count() > 0) {
      pollfd p{c.sock.get(), POLLIN, 0};
      const timespec wait_time{0, static_cast<long>(wait.count())};
      if (::ppoll(&p, 1, &wait_time, nullptr) <= 0 || !(p.revents & POLLIN)) return false;
      n = ::recv(c.sock.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    }
    if (n <= 0) return false;  // closed, or nothing after all: the watch sees which
    c.started = Connection::Clock::now();
    c.buffered.append(buffer.data(), static_cast<size_t>(n));
  }
  // A head not whole, too large or malformed goes back to wait (head_wait.hpp),
  // which waits for the rest or answers it, from the bytes read here.
  const auto end = head_end(c.buffered);
  if (!end || *end > limits_.head.max_bytes) return false;
  if (!c.started) c.started = Connection::Clock::now();
  const std::string_view head = std::string_view(c.buffered).substr(0, *end);
  if (check_head(head, limits_.head)) return false;
  // A body not all here yet is waited for among the others, not by this thread.
  const BodyFraming framing = body_framing(head);
  return !framing.chunked && !framing.expects_continue && c.buffered.size() - *end >= framing.length.value_or(0);
}

bool GuardedServer::serve_request(ConnectionStream& stream, size_t head_bytes, bool last, bool& next) {
  bool client_closes = false;
  bool with_body = false;
  const bool answered = process_request(stream, last, client_closes, [&](httplib::Request& req) {
    with_body = has_body(req);
    if (with_body) {
      last = true;
      req.headers.erase("Connection");  // and the answer says so
      req.set_header("Connection", "close");
    }
    if (req.has_header("Transfer-Encoding")) stream.expect_chunked_body(head_bytes);
    // A request without either has no body (RFC 9112, 6.3).
    if (!req.has_header("Transfer-Encoding") && !req.has_header("Content-Length")) req.set_header("Content-Length", "0");
  });
  if (!answered && stream.timed_out() && stream.written() == 0) {
    stream.write_all(closing_answer(408, "the request did not arrive within " + deadline_text(limits_), false));
  }
  // After a timeout the rest of the request may still come: it is no next request.
  if (!answered || stream.timed_out()) return true;
  // A body may have been refused unread (413, 415, ...): the client may still be sending it.
  if (client_closes || last) return with_body;
  next = true;
  return false;
}

void end_connection_after_answer() { t_end_after = true; }

void hand_off_connection_after_answer(ConnectionTaker take) { t_hand_off = std::move(take); }

bool request_timed_out() { return t_serving != nullptr && t_serving->timed_out(); }

std::string request_framing_problem() { return t_serving == nullptr ? "" : t_serving->framing_problem(); }

double request_seconds() {
  if (t_serving == nullptr) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_serving->request_started()).count();
}

}  // namespace tula::service
