// What happened to the jobs, in order, for the server-sent-event streams: a
// bounded log of numbered events (state changes, new metrics, progress,
// re-plans) that the event pump reads. In memory only: the durable record is the
// store; a client that reconnects after a restart reads the job's state from
// the API. No LibTorch here.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::service {

struct Event {
  int64_t seq = 0;
  int64_t job_id = 0;
  std::string type;  // state, metrics, progress, replan
  nlohmann::json data;
};

class EventLog {
 public:
  explicit EventLog(size_t capacity = 20000) : capacity_(capacity) {}

  void publish(int64_t job_id, const std::string& type, nlohmann::json data);
  // Every job's events numbered above `after`, at once (the event pump's
  // read, for all its streams together). Events that fell off the log are
  // lost to a reader this far behind.
  std::vector<Event> all_after(int64_t after);
  int64_t last_seq();
  // Called after each publish, outside the log's lock; must not block (the
  // event pump's wake-up). One listener.
  void set_listener(std::function<void()> listener);

 private:
  std::mutex mutex_;
  std::deque<Event> events_;
  size_t capacity_;
  int64_t seq_ = 0;
  std::function<void()> listener_;  // under mutex_ to set; called outside it
};

}  // namespace tula::service
