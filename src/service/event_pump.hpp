// The open event streams of `GET /v1/jobs/{id}/events`, all served by one
// thread: once a request thread has written a stream's answer head and its
// first event, the connection comes here (http_server.hpp's hand-off) and
// the request thread is free. The pump polls every stream's socket and an
// eventfd that the event log wakes on each publish; it writes each job's new
// events as chunks to the streams of that job, a keep-alive comment to a
// stream quiet for the keep-alive interval, and, once the job has ended (or
// was deleted), an `end` event and the last chunk, then closes. A client that
// closes its end, or reads so slowly that a stream's unwritten bytes pass
// kMaxUnwritten, loses its stream. What a stream holds: its socket, its
// places under the caps (given back when it closes) and its unwritten bytes.
// No LibTorch here.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fd.hpp"
#include "service/event_log.hpp"

namespace tula::service {

// One stream as the request thread hands it over.
struct EventStreamStart {
  common::Fd sock;
  int64_t job_id = 0;
  int64_t cursor = 0;           // the last event number the client has (its Last-Event-ID, or the log's last)
  std::shared_ptr<void> places;  // what it holds under the caps; released when the stream closes
};

// The text of one event as a server-sent event.
std::string sse_event(const Event& e);
// `text` as one chunk of a chunked body.
std::string as_chunk(const std::string& text);

class EventPump {
 public:
  // The state an ended job's `end` event names (its final state, or
  // "deleted"); none while the job runs.
  using Ending = std::function<std::optional<nlohmann::json>(int64_t job_id)>;
  // A stream's unwritten bytes at most: a client that reads slower than its
  // job's events come is dropped rather than buffered without end.
  static constexpr size_t kMaxUnwritten = 64 * 1024;

  EventPump(EventLog& log, Ending ending, std::chrono::milliseconds keepalive);
  ~EventPump();  // stop()
  EventPump(const EventPump&) = delete;
  EventPump& operator=(const EventPump&) = delete;

  // Takes a stream whose answer head and first event are written.
  void add(EventStreamStart start);
  // Closes every stream (no `end`: the server is going down) and joins the thread.
  void stop();
  // Streams open now.
  size_t open() const;

 private:
  struct Stream;
  void run();
  void wake();
  // One pass: new streams in, gone ones out, new events and keep-alives written.
  void serve_streams(const std::vector<short>& revents);
  void write_events(std::chrono::steady_clock::time_point now);
  // Queues the `end` event and the last chunk when `state` says the job is over.
  void end_with(Stream& s, const std::optional<nlohmann::json>& state);
  bool flush(Stream& s);  // false: the client is gone

  EventLog& log_;
  Ending ending_;
  std::chrono::milliseconds keepalive_;
  common::Fd wake_fd_;  // an eventfd
  mutable std::mutex mutex_;
  std::vector<EventStreamStart> arriving_;  // under mutex_
  size_t open_ = 0;                         // under mutex_
  bool stopping_ = false;                   // under mutex_
  std::vector<std::unique_ptr<Stream>> streams_;  // the pump thread's own
  std::thread thread_;
  std::once_flag stopped_;
};

}  // namespace tula::service
