// The predictor on machines that name their devices and links: the profiled
// GPU node (one worker per GPU), and the two-level allreduce of a type whose
// node link is given (inside the node over it, then across nodes), against
// the formulas written out by hand.
#include <gtest/gtest.h>

#include "predict/allreduce_model.hpp"
#include "predict/predictor.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

Profile gpu_profile(int64_t gpus) {
  return test::synthetic_gpu_profile("NVIDIA H100 80GB HBM3", gpus, 81);
}

TEST(DeviceMachine, TheProfiledGpuNodeRunsOneWorkerPerGpu) {
  const auto eight = profiled_machine(gpu_profile(8));
  EXPECT_EQ(eight.devices_per_node, 8);
  EXPECT_EQ(eight.max_workers_per_node, 8);
  EXPECT_EQ(eight.accelerator_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(eight.device_memory_bytes, 80LL << 30) << "per GPU";
  EXPECT_EQ(profiled_machine(gpu_profile(1)).max_workers_per_node, 1);
  // A CPU is one device its workers share, up to its cores, as before.
  const auto cpu = profiled_machine(test::make_profile({}, 7));
  EXPECT_EQ(cpu.devices_per_node, 1);
  EXPECT_EQ(cpu.max_workers_per_node, 4);
  EXPECT_TRUE(cpu.accelerator_model.empty());
}

TEST(DeviceMachine, HierarchicalAllreduceIsTheNodesRingThenTheNetworksRing) {
  const AllreduceModel::Link nvlink{5e-6, 1 / 450e9}, ib{20e-6, 8 / 3200e9};
  const double m = 100e6;
  // One node of 8: reduce-scatter and allgather over NVLink, 2 x 7 steps.
  EXPECT_DOUBLE_EQ(AllreduceModel::hierarchical(1, 8, m, 1, nvlink, ib), 14 * 5e-6 + 2 * 7.0 / 8 * m / 450e9);
  // Four nodes of one: the network's ring alone.
  EXPECT_DOUBLE_EQ(AllreduceModel::hierarchical(4, 1, m, 1, nvlink, ib), 6 * 20e-6 + 2 * 3.0 / 4 * m * 8 / 3200e9);
  // Both, with 3 messages: each pays every step's latency.
  EXPECT_DOUBLE_EQ(AllreduceModel::hierarchical(4, 8, m, 3, nvlink, ib),
                   3 * 14 * 5e-6 + 2 * 7.0 / 8 * m / 450e9 + 3 * 6 * 20e-6 + 2 * 3.0 / 4 * m * 8 / 3200e9);
  EXPECT_EQ(AllreduceModel::hierarchical(1, 1, m, 1, nvlink, ib), 0.0);
}

TEST(DeviceMachine, ATypeThatNamesItsNodesLinkIsAllreducedInTwoLevels) {
  const auto profile = gpu_profile(1);
  const auto predictor = Predictor::from_profile(profile, {.calibrate_to_pilot = false});
  const double alpha = predictor.models().allreduce.alpha();
  const double inv_bw = 1 / predictor.models().allreduce.bandwidth();
  const auto layout = bucket_layout_of(profile.model, profile.buckets);
  const double bytes = static_cast<double>(profile.model.gradient_bytes), buckets = static_cast<double>(layout.count);

  MachineSpec node = profiled_machine(profile);
  node.name = "h100x8";
  node.devices_per_node = node.max_workers_per_node = 8;
  node.network_gbps = 3200;
  node.network_latency_s = 1e-6;  // below the profiled latency: the profiled one stays
  node.intra_node = {"nvlink4", 450, 0};
  const AllreduceModel::Link intra{alpha, 1 / 450e9}, inter{std::max(alpha, 1e-6), 8 / 3200e9};
  const auto within = predictor.point({1, 8, 32, 1}, node);
  EXPECT_NEAR(within.allreduce_s, AllreduceModel::hierarchical(1, 8, bytes, buckets, intra, inter), 1e-15);
  const auto across = predictor.point({2, 8, 32, 1}, node);
  EXPECT_NEAR(across.allreduce_s, AllreduceModel::hierarchical(2, 8, bytes, buckets, intra, inter), 1e-15);
  // The link's own latency where the catalog gives one.
  node.intra_node.latency_s = 3e-6;
  EXPECT_NEAR(predictor.point({1, 8, 32, 1}, node).allreduce_s,
              AllreduceModel::hierarchical(1, 8, bytes, buckets, {3e-6, 1 / 450e9}, inter), 1e-15);
  const auto notes = predictor.predict({2, 8, 32, 1}, node).notes;
  bool said = false;
  for (const auto& n : notes) said |= n.find("in two levels, inside the node over nvlink4 at 450 GB/s") != std::string::npos;
  EXPECT_TRUE(said);

  // PCIe's 32 GB/s against NVLink's 450: the node's bandwidth term, 450/32 times longer.
  MachineSpec pcie = node;
  pcie.intra_node = {"pcie4", 32, 0};
  node.intra_node.latency_s = 0;
  const double nv = predictor.point({1, 8, 32, 1}, node).allreduce_s, pc = predictor.point({1, 8, 32, 1}, pcie).allreduce_s;
  const double latency = buckets * 14 * alpha;
  EXPECT_NEAR((pc - latency) / (nv - latency), 450.0 / 32, 1e-9);

  // Without a node link: the flat ring over every worker, as before.
  MachineSpec flat = node;
  flat.intra_node = {};
  EXPECT_NEAR(predictor.point({2, 8, 32, 1}, flat).allreduce_s,
              AllreduceModel::bucketed(16, bytes, buckets, std::max(alpha, 1e-6), std::max(inv_bw, 8 / 3200e9)),
              1e-15);
}

}  // namespace
}  // namespace tula::predict
