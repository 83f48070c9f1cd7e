// Machine types that name their accelerator and links, speeds against a
// named device, and which profile plans which type (plan/device_speed.hpp),
// on the shipped catalogs and synthetic profiles of named devices.
#include "plan/device_speed.hpp"

#include <gtest/gtest.h>

#include "helpers/expect_error.hpp"
#include "plan/planner.hpp"
#include "plan/test_catalog.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::plan {
namespace {

using nlohmann::json;

Catalog shipped(const std::string& name) { return load_catalog(std::string(TULA_SOURCE_DIR) + "/catalogs/" + name); }

const MachineType& type(const Catalog& c, const std::string& name) {
  for (const auto& m : c.machines) {
    if (m.spec.name == name) return m;
  }
  throw std::out_of_range(name);
}

// A synthetic profile measured on `gpus` of the named GPU.
predict::Profile gpu_profile(const std::string& name, int64_t gpus = 1) {
  return test::synthetic_gpu_profile(name, gpus, 78);
}

// A synthetic CPU profile of a machine with `cores` usable cores.
predict::Profile cpu_profile(int64_t cores) {
  auto p = test::make_profile({}, 77);
  p.hardware.cores = cores;
  return p;
}

// The test catalog as catalogs were before devices were named: its GPU type
// with a relative_speed against nothing named and no accelerator model.
Catalog legacy_catalog() {
  auto j = test::catalog_json();
  auto& gpu = j["machine_types"][2];
  gpu.erase("accelerator");
  gpu.erase("speed_relative_to");
  gpu["devices_per_node"] = 4;
  gpu["device_memory_bytes"] = 24000000000;
  return catalog_from_json(j);
}

std::string error_of(const json& j) {
  return tula::testing::error_message<CatalogError>([&] { catalog_from_json(j); });
}

TEST(DeviceCatalog, ATypeNamesItsAcceleratorLinkAndWhatItsSpeedIsAgainst) {
  const auto c = shipped("gpu.json");
  EXPECT_EQ(c.speed_relative_to.device, "NVIDIA H100 80GB HBM3");
  const auto& h200 = type(c, "h200x8-ndr");
  EXPECT_EQ(h200.spec.device_kind, "cuda") << "an accelerator is a CUDA device unless the type says otherwise";
  EXPECT_EQ(h200.spec.accelerator_model, "NVIDIA H200");
  EXPECT_EQ(h200.spec.devices_per_node, 8);
  EXPECT_EQ(h200.spec.max_workers_per_node, 8) << "one worker per GPU";
  EXPECT_EQ(h200.spec.device_memory_bytes, 143771LL << 20);
  EXPECT_EQ(h200.spec.intra_node.kind, "nvlink4");
  EXPECT_DOUBLE_EQ(h200.spec.intra_node.gbytes_per_s, 450);
  EXPECT_NE(h200.link_source.find("NVIDIA H200"), std::string::npos) << "the link's figure is cited";
  EXPECT_EQ(h200.speed_relative_to, c.speed_relative_to) << "the catalog's reference, unless the type names its own";
  EXPECT_EQ(to_json(catalog_from_json(to_json(c))), to_json(c));
  for (const char* name : {"example.json", "cluster-64gpu.json", "emulated.json"}) {
    const auto other = shipped(name);
    EXPECT_EQ(to_json(catalog_from_json(to_json(other))), to_json(other)) << name;
  }
}

TEST(DeviceCatalog, BadDeviceFieldsAreNamed) {
  auto j = to_json(shipped("gpu.json"));
  j["machine_types"][1]["devices_per_node"] = 4;
  EXPECT_NE(error_of(j).find("machine_types[1] (h100x8-ndr).devices_per_node: give it in accelerator"),
            std::string::npos)
      << error_of(j);
  j = to_json(shipped("gpu.json"));
  j["machine_types"][1]["accelerator"].erase("memory_bytes");
  EXPECT_NE(error_of(j).find("accelerator.memory_bytes: missing"), std::string::npos) << error_of(j);
  j = to_json(shipped("gpu.json"));
  j["machine_types"][1]["intra_node_link"]["gbytes_per_s"] = 0;
  EXPECT_NE(error_of(j).find("intra_node_link.gbytes_per_s"), std::string::npos) << error_of(j);
  j = to_json(shipped("gpu.json"));
  j["speed_relative_to"] = json::object();
  EXPECT_NE(error_of(j).find("speed_relative_to: names no device"), std::string::npos) << error_of(j);
}

TEST(DeviceSpeed, TheProfiledDevicesOwnTypeIsNeverScaled) {
  const auto c = shipped("gpu.json");
  const auto h200 = gpu_profile("NVIDIA H200");
  const auto r = resolve_speed(type(c, "h200x8-ndr"), c, h200);
  ASSERT_TRUE(r.plannable);
  EXPECT_DOUBLE_EQ(r.factor, 1.0) << "its 1.13 is against the H100, and the H200 was measured";
  EXPECT_NE(r.note.find("not applied"), std::string::npos) << r.note;
  // The H100 itself from an H200 profile: the ratio of the two speeds.
  const auto h100 = resolve_speed(type(c, "h100x8-ndr"), c, h200);
  ASSERT_TRUE(h100.plannable);
  EXPECT_DOUBLE_EQ(h100.factor, 1 / 1.13);
  const auto a100 = resolve_speed(type(c, "a100x8-hdr"), c, h200);
  EXPECT_DOUBLE_EQ(a100.factor, 0.38 / 1.13);
  EXPECT_NE(a100.note.find("over the profiled 'NVIDIA H200''s 1.13"), std::string::npos) << a100.note;
  // From the reference device itself: each type's own figure.
  const auto from_h100 = resolve_speed(type(c, "a10gx4-pcie"), c, gpu_profile("NVIDIA H100 80GB HBM3"));
  EXPECT_DOUBLE_EQ(from_h100.factor, 0.15);
}

TEST(DeviceSpeed, AGpuTheCatalogDoesNotRelateIsRefusedSayingWhatWouldDo) {
  const auto c = shipped("gpu.json");
  const auto r = resolve_speed(type(c, "h100x8-ndr"), c, gpu_profile("NVIDIA L4"));
  EXPECT_FALSE(r.plannable);
  for (const char* part : {"h100x8-ndr", "'NVIDIA H100 80GB HBM3'", "'NVIDIA L4'", "profile on"}) {
    EXPECT_NE(r.reason.find(part), std::string::npos) << part << " in: " << r.reason;
  }
}

TEST(DeviceSpeed, ACpuProfileDoesNotPlanGpuTypesUnlessTheCatalogStatesTheAssumption) {
  // gpu.json's speeds are against an H100: nothing a CPU profile can scale.
  const auto g = shipped("gpu.json");
  const auto r = resolve_speed(type(g, "h100x1"), g, cpu_profile(2));
  EXPECT_FALSE(r.plannable);
  EXPECT_NE(r.reason.find("the cpu 'Synthetic CPU' (2 cores)"), std::string::npos) << r.reason;
  // A speed that names no device: a CPU profile does not tell a GPU's speed.
  const auto legacy = legacy_catalog();
  const auto l = resolve_speed(legacy.machines[2], legacy, cpu_profile(4));
  EXPECT_FALSE(l.plannable);
  EXPECT_NE(l.reason.find("does not tell a cuda device's speed"), std::string::npos) << l.reason;
  EXPECT_NE(l.reason.find("tula profile --device cuda"), std::string::npos) << l.reason;
  // cluster-64gpu.json states its 40 against a 2-core CPU: planned from one, and said to be assumed.
  const auto cluster = shipped("cluster-64gpu.json");
  const auto a = resolve_speed(cluster.machines[0], cluster, cpu_profile(2));
  ASSERT_TRUE(a.plannable) << a.reason;
  EXPECT_DOUBLE_EQ(a.factor, 40);
  EXPECT_NE(a.note.find("the catalog's assumption"), std::string::npos) << a.note;
  EXPECT_FALSE(resolve_speed(cluster.machines[0], cluster, cpu_profile(4)).plannable) << "not a 2-core CPU";
  // ... and from a profile of its own A100, at the A100's measured speed.
  const auto own = resolve_speed(cluster.machines[0], cluster, gpu_profile("NVIDIA A100-SXM4-40GB"));
  ASSERT_TRUE(own.plannable);
  EXPECT_DOUBLE_EQ(own.factor, 1);
  EXPECT_FALSE(resolve_speed(cluster.machines[0], cluster, gpu_profile("NVIDIA H100 80GB HBM3")).plannable);
}

TEST(DeviceSpeed, CpuTypesOfOlderCatalogsKeepTheirSpeedAgainstTheProfiledCpu) {
  const auto c = shipped("example.json");
  const auto r = resolve_speed(type(c, "c7i.2xlarge"), c, cpu_profile(2));
  ASSERT_TRUE(r.plannable);
  EXPECT_DOUBLE_EQ(r.factor, 1.2);
  // ... and a GPU profile does not plan them.
  EXPECT_FALSE(resolve_speed(type(c, "c7i.2xlarge"), c, gpu_profile("NVIDIA H100 80GB HBM3")).plannable);
  // A GPU type that names no accelerator and gives no speed: taken to be the profiled GPU, and said so.
  const auto legacy = legacy_catalog();
  auto unnamed = legacy.machines[2];
  unnamed.speed_given = false;
  unnamed.spec.relative_speed = 1;
  const auto u = resolve_speed(unnamed, legacy, gpu_profile("NVIDIA H200"));
  ASSERT_TRUE(u.plannable);
  EXPECT_NE(u.note.find("names no accelerator model; taken to be the profiled 'NVIDIA H200'"), std::string::npos);
  // With a speed against nothing named, a GPU profile cannot tell what it means.
  EXPECT_FALSE(resolve_speed(legacy.machines[2], legacy, gpu_profile("NVIDIA H200")).plannable);
}

TEST(DeviceSpeed, ThePlannerTakesEachTypesProfileAndSaysWhyItSkipsTheRest) {
  const auto cpu = cpu_profile(2);
  const Planner alone(cpu, shipped("example.json"));
  std::string skipped;
  for (size_t i = 0; i < alone.catalog().machines.size(); ++i) {
    const auto& m = alone.catalog().machines[i];
    if (m.spec.device_kind == "cuda") {
      EXPECT_THROW(alone.predictor_for(i), std::out_of_range) << m.spec.name;
    } else {
      EXPECT_DOUBLE_EQ(m.spec.relative_speed, 1.2) << m.spec.name;
    }
  }
  const auto plan = alone.plan(Objective::knee());
  for (const auto& s : plan.notes.skipped) skipped += s + "\n";
  for (const char* name : {"g5.xlarge", "g5.12xlarge", "p4d.24xlarge"}) {
    EXPECT_NE(skipped.find(std::string(name) + ": its relative_speed"), std::string::npos) << skipped;
  }
  for (const auto& c : plan.candidates) EXPECT_EQ(plan.machines[c.machine].spec.device_kind, "cpu");

  // With an H100 profile beside it, the GPU types are planned from it at their speed against the H100.
  const auto h100 = gpu_profile("NVIDIA H100 80GB HBM3");
  const Planner both({cpu, h100}, shipped("example.json"));
  const auto& p4d = type(both.catalog(), "p4d.24xlarge");
  EXPECT_DOUBLE_EQ(p4d.spec.relative_speed, 0.38);
  EXPECT_TRUE(p4d.speed_resolved);
  EXPECT_DOUBLE_EQ(type(both.catalog(), "c7i.8xlarge").spec.relative_speed, 1.2);
  EXPECT_DOUBLE_EQ(type(both.catalog(), "p4d.24xlarge").catalog_speed, 0.38);
  EXPECT_EQ(both.predictor_for(4).models().compute.shape, predict::ComputeShape::Saturating);
  EXPECT_EQ(both.predictor_for(0).models().compute.shape, predict::ComputeShape::Linear);
}

TEST(DeviceSpeed, AResolvedCatalogPlansAsTheOneItCameFrom) {
  const auto h200 = gpu_profile("NVIDIA H200");
  const auto c = shipped("gpu.json");
  const auto resolved = resolve_speeds(c, h200);
  ASSERT_EQ(resolved.machines.size(), c.machines.size()) << "indices stay those of the catalog";
  EXPECT_DOUBLE_EQ(type(resolved, "h100x1").spec.relative_speed, 1 / 1.13);
  // Resolving again changes nothing (the tune runner resolves, then plans).
  const Planner planner(h200, resolved);
  EXPECT_DOUBLE_EQ(type(planner.catalog(), "h100x1").spec.relative_speed, 1 / 1.13);
  EXPECT_DOUBLE_EQ(type(planner.catalog(), "h200x8-ndr").spec.relative_speed, 1);
  const auto direct = Planner(h200, c).plan(Objective::knee());
  const auto again = planner.plan(Objective::knee());
  EXPECT_EQ(direct.chosen_candidate().config.global_batch(), again.chosen_candidate().config.global_batch());
  EXPECT_DOUBLE_EQ(direct.chosen_candidate().time_s, again.chosen_candidate().time_s);
}

}  // namespace
}  // namespace tula::plan
