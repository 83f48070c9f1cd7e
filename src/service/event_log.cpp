#include "service/event_log.hpp"

#include <algorithm>

namespace tula::service {

void EventLog::publish(int64_t job_id, const std::string& type, nlohmann::json data) {
  std::function<void()> listener;
  {
    std::lock_guard lock(mutex_);
    events_.push_back({++seq_, job_id, type, std::move(data)});
    while (events_.size() > capacity_) events_.pop_front();
    listener = listener_;
  }
  if (listener) listener();
}

std::vector<Event> EventLog::all_after(int64_t after) {
  std::lock_guard lock(mutex_);
  // Numbered in order: the first one above `after` by binary search.
  const auto first = std::upper_bound(events_.begin(), events_.end(), after,
                                      [](int64_t seq, const Event& e) { return seq < e.seq; });
  return {first, events_.end()};
}

void EventLog::set_listener(std::function<void()> listener) {
  std::lock_guard lock(mutex_);
  listener_ = std::move(listener);
}

int64_t EventLog::last_seq() {
  std::lock_guard lock(mutex_);
  return seq_;
}

}  // namespace tula::service
