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
  changed_.notify_all();
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

std::vector<Event> EventLog::after(int64_t after, int64_t job_id, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  const auto collect = [&] {
    std::vector<Event> out;
    for (auto it = events_.rbegin(); it != events_.rend() && it->seq > after; ++it) {
      if (it->job_id == job_id) out.push_back(*it);
    }
    return std::vector<Event>(out.rbegin(), out.rend());
  };
  std::vector<Event> out;
  changed_.wait_for(lock, wait, [&] {
    out = collect();
    return !out.empty() || closed_;
  });
  return out;
}

int64_t EventLog::last_seq() {
  std::lock_guard lock(mutex_);
  return seq_;
}

void EventLog::close() {
  std::function<void()> listener;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    listener = listener_;
  }
  changed_.notify_all();
  if (listener) listener();
}

}  // namespace tula::service
