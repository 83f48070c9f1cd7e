// How many of something (connections, event streams) each client address
// holds, with a cap for one address and one for all together. No LibTorch here.
#pragma once
#include <map>
#include <mutex>
#include <string>

namespace tula::service {

class ClientCounts {
 public:
  enum class Taken { Yes, ClientFull, AllFull };
  ClientCounts(int per_client, int total) : per_client_(per_client), total_(total) {}
  Taken take(const std::string& client);
  void give_back(const std::string& client);
  int per_client() const { return per_client_; }
  int total() const { return total_; }
  int held() const;

  // One place of a client, held for as long as this lives (when it was
  // taken: see taken()).
  class Held {
   public:
    Held(ClientCounts& all, std::string client) : all_(all), client_(std::move(client)), taken_(all.take(client_)) {}
    ~Held() {
      if (taken_ == Taken::Yes) all_.give_back(client_);
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    Taken taken() const { return taken_; }
    const std::string& client() const { return client_; }

   private:
    ClientCounts& all_;
    std::string client_;
    Taken taken_;
  };

 private:
  int per_client_, total_;
  mutable std::mutex mutex_;
  std::map<std::string, int> held_;
  int all_held_ = 0;
};

}  // namespace tula::service
