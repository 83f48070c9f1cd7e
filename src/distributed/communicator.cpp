#include "distributed/communicator.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "common/tcp_port.hpp"

namespace tula::distributed {
namespace {

// What ProcessGroupGloo and ProcessGroupNCCL derive from: a ProcessGroup in
// LibTorch 1.x; from 2.0 on a Backend, which a ProcessGroup only wraps for
// Python's dispatch. Both offer the collectives used here.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveGroup = c10d::Backend;
#else
using CollectiveGroup = c10d::ProcessGroup;
#endif

class C10dWork : public PendingWork {
 public:
  C10dWork(c10::intrusive_ptr<c10d::Work> work, std::chrono::milliseconds timeout)
      : work_(std::move(work)), timeout_(timeout) {}
  void wait() override {
    try {
      work_->wait(timeout_);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("collective failed (a worker may have died or stalled): ") +
                               e.what());
    }
  }
  // c10's future runs the callback under streams that wait on the work's
  // CUDA events (none on the CPU): what stream_mark.hpp relies on.
  void on_complete(std::function<void()> callback) override {
    work_->getFuture()->addCallback([cb = std::move(callback)](c10::ivalue::Future&) { cb(); });
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::chrono::milliseconds timeout_;
};

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

// The local IPv4 address this host would use to reach `host`: the kernel's
// route choice, read back from a connected UDP socket (no packet is sent).
// Empty when it cannot be found.
std::string local_address_toward(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || found == nullptr) return {};
  std::string local;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in self{};
    socklen_t len = sizeof self;
    char text[INET_ADDRSTRLEN] = {};
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&self), &len) == 0 &&
        inet_ntop(AF_INET, &self.sin_addr, text, sizeof text) != nullptr) {
      local = text;
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return local;
}

// Which local address Gloo binds: GLOO_SOCKET_IFNAME as in PyTorch; loopback
// for single-machine jobs; otherwise the address on the route to the master.
// (c10d's default resolves the hostname, which in containers and network
// namespaces is often 127.0.0.1: peers on other hosts then dial their own
// loopback and are refused.)
std::shared_ptr<::gloo::transport::Device> gloo_device(const RendezvousInfo& info) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  if (is_loopback(info.master_addr)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  if (const auto local = local_address_toward(info.master_addr); !local.empty() && !is_loopback(local)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname(local);
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// Every worker counts itself in, then waits until all have, so a missing
// worker is reported as such within the timeout.
void wait_for_all_workers(c10d::Store& store, const RendezvousInfo& info, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int64_t joined = store.add("joined", 1);
  while (joined < info.world_size) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error(
          fmt::format("rendezvous at {}:{} failed for rank {}: not all workers joined within {} s ({} of {} arrived)",
                      info.master_addr, info.master_port, info.rank, timeout.count() / 1000, joined,
                      info.world_size));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    joined = store.add("joined", 0);
  }
}

class C10dCommunicator : public Communicator {
 public:
  C10dCommunicator(const RendezvousInfo& info, const CommunicatorOptions& options)
      : rank_(info.rank),
        world_size_(info.world_size),
        options_(options),
        device_(options.use_cuda ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(options.cuda_device))
                                 : torch::Device(torch::kCPU)) {
    c10::intrusive_ptr<c10d::Store> store;
    const std::string where = fmt::format("{}:{}", info.master_addr, info.master_port);
    // Rank 0 opens the store: the others wait until it listens, since
    // c10d's client, refused, sleeps a whole second before trying again.
    if (info.rank != 0 && !common::wait_for_listener(info.master_addr, info.master_port, options.rendezvous_timeout)) {
      throw std::runtime_error(fmt::format(
          "rendezvous at {} failed for rank {} of {}: not all workers joined within {} s (nobody listened there: "
          "rank 0 never opened the store)",
          where, info.rank, info.world_size, options.rendezvous_timeout.count() / 1000));
    }
    try {
      c10d::TCPStoreOptions store_options;
      store_options.port = static_cast<std::uint16_t>(info.master_port);
      store_options.isServer = info.rank == 0;
      // c10d's own wait for workers gives up silently at the timeout (1.13);
      // wait_for_all_workers() below waits and fails loudly instead.
      store_options.numWorkers.reset();
      store_options.waitWorkers = false;
      store_options.timeout = options.rendezvous_timeout;
      store = c10::make_intrusive<c10d::TCPStore>(info.master_addr, store_options);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      const bool in_use = what.find("in use") != std::string::npos ||
                          what.find("EADDRINUSE") != std::string::npos;
      const std::string why =
          in_use ? "the port is already in use (choose another with --master-port)"
                 : fmt::format("not all workers joined within {} s", options.rendezvous_timeout.count() / 1000);
      throw std::runtime_error(fmt::format("rendezvous at {} failed for rank {} of {}: {}\n  (c10d: {})", where,
                                           info.rank, info.world_size, why, what.substr(0, what.find('\n'))));
    }
    store = c10::make_intrusive<c10d::PrefixStore>("tula", store);
    wait_for_all_workers(*store, info, options.rendezvous_timeout);
    backend_ = options.backend;
    if (backend_ == "auto") backend_ = options.use_cuda ? "nccl" : "gloo";
    if (backend_ == "gloo") {
      auto pg_options = c10d::ProcessGroupGloo::Options::create(options.collective_timeout);
      pg_options->devices.push_back(gloo_device(info));
      pg_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank_, world_size_, pg_options);
    } else if (backend_ == "nccl") {
#ifdef USE_C10D_NCCL
      auto pg_options = c10d::ProcessGroupNCCL::Options::create();
      pg_options->timeout = options.collective_timeout;
      pg_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank_, world_size_, pg_options);
#else
      throw std::runtime_error("backend nccl requested but this LibTorch was built without CUDA/NCCL");
#endif
    } else {
      throw std::invalid_argument("unknown communication backend '" + backend_ + "' (gloo, nccl, auto)");
    }
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string backend() const override { return backend_; }
  torch::Device device() const override { return device_; }

  std::shared_ptr<PendingWork> allreduce_async(torch::Tensor tensor) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return std::make_shared<C10dWork>(pg_->allreduce(tensors), options_.collective_timeout);
  }

  void broadcast(torch::Tensor tensor, int root) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    C10dWork(pg_->broadcast(tensors, opts), options_.collective_timeout).wait();
  }

  void barrier() override {
    // A tiny allreduce rather than c10d's barrier, which on Gloo waits without
    // the collective timeout in some versions.
    allreduce(torch::zeros({1}, torch::TensorOptions().device(device_)));
  }

 private:
  int rank_;
  int world_size_;
  CommunicatorOptions options_;
  torch::Device device_;
  std::string backend_;
  c10::intrusive_ptr<CollectiveGroup> pg_;
};

}  // namespace

std::vector<double> Communicator::sum(const std::vector<double>& values) {
  auto tensor = torch::tensor(values, torch::kDouble).to(device());
  allreduce(tensor);
  tensor = tensor.cpu();
  return {tensor.data_ptr<double>(), tensor.data_ptr<double>() + tensor.numel()};
}

std::unique_ptr<Communicator> Communicator::connect(const RendezvousInfo& info,
                                                    const CommunicatorOptions& options) {
  options.validate();
  if (info.world_size < 1 || info.rank < 0 || info.rank >= info.world_size) {
    throw std::invalid_argument(fmt::format("invalid rank {} for world size {}", info.rank, info.world_size));
  }
  return std::make_unique<C10dCommunicator>(info, options);
}

}  // namespace tula::distributed
