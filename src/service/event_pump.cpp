#include "service/event_pump.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace tula::service {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The longest poll: nothing is due sooner than a keep-alive, but a stream
// added meanwhile wakes the pump anyway.
constexpr milliseconds kLongestPoll{1000};

}  // namespace

std::string sse_event(const Event& e) {
  return fmt::format("id: {}\nevent: {}\ndata: {}\n\n", e.seq, e.type, e.data.dump());
}

std::string as_chunk(const std::string& text) { return fmt::format("{:x}\r\n{}\r\n", text.size(), text); }

struct EventPump::Stream {
  common::Fd sock;
  int64_t job_id = 0;
  int64_t cursor = 0;
  std::shared_ptr<void> places;
  std::string unwritten;
  Clock::time_point last_write;
  bool ending = false;  // the `end` event and the last chunk are queued: close once they are written
  bool gone = false;
};

EventPump::EventPump(EventLog& log, Ending ending, milliseconds keepalive)
    : log_(log), ending_(std::move(ending)), keepalive_(keepalive),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!wake_fd_) throw std::runtime_error(std::string("event streams: eventfd: ") + std::strerror(errno));
  log_.set_listener([this] { wake(); });
  thread_ = std::thread([this] { run(); });
}

EventPump::~EventPump() { stop(); }

void EventPump::stop() {
  std::call_once(stopped_, [this] {
    log_.set_listener(nullptr);
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake();
    thread_.join();
  });
}

void EventPump::wake() {
  const uint64_t one = 1;
  // A full counter already wakes the pump: nothing to do when this fails.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
}

void EventPump::add(EventStreamStart start) {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;  // the server is going down: `start` closes its socket as it goes
    arriving_.push_back(std::move(start));
    ++open_;
  }
  wake();
}

size_t EventPump::open() const {
  const std::lock_guard lock(mutex_);
  return open_;
}

void EventPump::run() {
  std::vector<pollfd> fds;
  std::vector<short> revents;
  std::vector<EventStreamStart> arrived;
  for (;;) {
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) break;
      arrived.swap(arriving_);
    }
    for (auto& a : arrived) {
      auto s = std::make_unique<Stream>();
      ::fcntl(a.sock.get(), F_SETFL, ::fcntl(a.sock.get(), F_GETFL) | O_NONBLOCK);
      s->sock = std::move(a.sock);
      s->job_id = a.job_id;
      s->cursor = a.cursor;
      s->places = std::move(a.places);
      s->last_write = Clock::now();
      end_with(*s, ending_(s->job_id));  // a job over already: its `end` at once
      streams_.push_back(std::move(s));
    }
    arrived.clear();
    const auto now = Clock::now();
    milliseconds wait = kLongestPoll;
    fds.assign(1, pollfd{wake_fd_.get(), POLLIN, 0});
    for (const auto& s : streams_) {
      const auto events = static_cast<short>(POLLIN | POLLRDHUP | (s->unwritten.empty() ? 0 : POLLOUT));
      fds.push_back(pollfd{s->sock.get(), events, 0});
      if (s->ending) continue;  // waits for POLLOUT only, not for a keep-alive
      const auto due = std::chrono::duration_cast<milliseconds>(s->last_write + keepalive_ - now);
      wait = std::clamp(due, milliseconds(0), wait);
    }
    ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    if (fds[0].revents & POLLIN) {
      uint64_t count = 0;
      while (::read(wake_fd_.get(), &count, sizeof count) > 0) {
      }
    }
    revents.clear();
    for (size_t i = 1; i < fds.size(); ++i) revents.push_back(fds[i].revents);
    serve_streams(revents);
  }
  // Going down: every stream closes, its places given back.
  streams_.clear();
  const std::lock_guard lock(mutex_);
  arriving_.clear();
  open_ = 0;
}

void EventPump::serve_streams(const std::vector<short>& revents) {
  for (size_t i = 0; i < revents.size(); ++i) {
    Stream& s = *streams_[i];
    if (revents[i] & (POLLERR | POLLHUP | POLLRDHUP | POLLNVAL)) {
      s.gone = true;  // the client closed its end, or the connection broke
    } else if (revents[i] & POLLIN) {
      // What a client sends on an event stream means nothing: read and dropped.
      char buffer[4096];
      const ssize_t n = ::recv(s.sock.get(), buffer, sizeof buffer, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) s.gone = true;
    }
  }
  write_events(Clock::now());
  for (auto& s : streams_) {
    if (!s->gone && !s->unwritten.empty()) s->gone = !flush(*s);
    if (!s->gone && s->ending && s->unwritten.empty()) {
      ::shutdown(s->sock.get(), SHUT_WR);  // the last chunk is out: FIN after it
      s->gone = true;
    }
  }
  const auto before = streams_.size();
  std::erase_if(streams_, [](const std::unique_ptr<Stream>& s) { return s->gone; });
  if (streams_.size() != before) {
    const std::lock_guard lock(mutex_);
    open_ -= before - streams_.size();
  }
}

void EventPump::write_events(Clock::time_point now) {
  if (streams_.empty()) return;
  int64_t from = streams_.front()->cursor;
  for (const auto& s : streams_) from = std::min(from, s->cursor);
  const std::vector<Event> events = log_.all_after(from);
  const int64_t newest = events.empty() ? from : events.back().seq;
  // A job's ending read once a pass, however many of its streams ask.
  std::map<int64_t, std::optional<nlohmann::json>> endings;
  const auto end_if_over = [&](Stream& s) {
    auto it = endings.find(s.job_id);
    if (it == endings.end()) it = endings.emplace(s.job_id, ending_(s.job_id)).first;
    end_with(s, it->second);
  };
  for (auto& s : streams_) {
    if (s->gone || s->ending) continue;
    bool wrote = false, state_changed = false;
    for (const auto& e : events) {
      if (e.seq <= s->cursor || e.job_id != s->job_id) continue;
      s->unwritten += as_chunk(sse_event(e));
      wrote = true;
      state_changed = state_changed || e.type == "state";
    }
    // Other jobs' events are read past too, so the next read starts here.
    s->cursor = std::max(s->cursor, newest);
    if (state_changed) end_if_over(*s);
    if (!wrote && !s->ending && now - s->last_write >= keepalive_) {
      end_if_over(*s);  // a job that ended without an event here (deleted) ends its streams too
      if (!s->ending) s->unwritten += as_chunk(": keep-alive\n\n");
      wrote = true;
    }
    if (wrote) s->last_write = now;
    if (s->unwritten.size() > kMaxUnwritten) s->gone = true;  // a client that does not read
  }
}

void EventPump::end_with(Stream& s, const std::optional<nlohmann::json>& state) {
  if (!state) return;
  s.unwritten += as_chunk("event: end\ndata: " + nlohmann::json{{"state", *state}}.dump() + "\n\n") + "0\r\n\r\n";
  s.ending = true;
}

bool EventPump::flush(Stream& s) {
  while (!s.unwritten.empty()) {
    const ssize_t n = ::send(s.sock.get(), s.unwritten.data(), s.unwritten.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      s.unwritten.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return true;  // the rest when the socket takes it (POLLOUT)
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace tula::service
