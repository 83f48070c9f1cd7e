#include "service/event_log.hpp"

namespace tula::service {

void EventLog::publish(int64_t job_id, const std::string& type, nlohmann::json data) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back({++seq_, job_id, type, std::move(data)});
    while (events_.size() > capacity_) events_.pop_front();
  }
  changed_.notify_all();
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
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

}  // namespace tula::service
