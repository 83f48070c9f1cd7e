#include "service/client_counts.hpp"

namespace tula::service {

ClientCounts::Taken ClientCounts::take(const std::string& client) {
  std::lock_guard lock(mutex_);
  if (all_held_ >= total_) return Taken::AllFull;
  const auto it = held_.find(client);
  if (it != held_.end() && it->second >= per_client_) return Taken::ClientFull;
  ++held_[client];
  ++all_held_;
  return Taken::Yes;
}

void ClientCounts::give_back(const std::string& client) {
  std::lock_guard lock(mutex_);
  --all_held_;
  if (--held_[client] <= 0) held_.erase(client);
}

int ClientCounts::held() const {
  std::lock_guard lock(mutex_);
  return all_held_;
}

}  // namespace tula::service
