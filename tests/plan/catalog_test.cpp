#include "plan/catalog.hpp"

#include <gtest/gtest.h>

#include "helpers/expect_error.hpp"
#include "plan/test_catalog.hpp"

namespace tula::plan {
namespace {

// The message of the CatalogError that reading `j` throws ("" if none).
std::string error_of(const nlohmann::json& j) {
  return tula::testing::error_message<CatalogError>([&] { catalog_from_json(j); });
}

TEST(Catalog, ReadsMachineTypes) {
  const auto c = catalog_from_json(test::catalog_json());
  ASSERT_EQ(c.machines.size(), 3u);
  EXPECT_EQ(c.machines[0].spec.device_memory_bytes, 16LL << 30);
  EXPECT_DOUBLE_EQ(c.machines[0].spec.network_latency_s, 30e-6);
  EXPECT_EQ(c.machines[0].spec.max_workers_per_node, 4);
  EXPECT_FALSE(c.machines[0].speed_given);
  EXPECT_EQ(c.machines[2].spec.max_workers_per_node, 4);  // defaults to devices per node
  EXPECT_TRUE(c.machines[2].speed_given);
  EXPECT_EQ(to_json(catalog_from_json(to_json(c))), to_json(c));
  EXPECT_DOUBLE_EQ(c.machines[0].spec.allreduce_on_cores, 0.0) << "none unless the catalog says";
}

TEST(Catalog, TheAllreducesShareOfTheCoresIsAShare) {
  auto j = test::catalog_json();
  j["machine_types"][1]["allreduce_on_cores"] = 0.4;
  const auto c = catalog_from_json(j);
  EXPECT_DOUBLE_EQ(c.machines[1].spec.allreduce_on_cores, 0.4);
  EXPECT_EQ(to_json(catalog_from_json(to_json(c))), to_json(c));
  j["machine_types"][1]["allreduce_on_cores"] = 1.5;
  auto e = error_of(j);
  EXPECT_NE(e.find("machine_types[1] (cpu.large).allreduce_on_cores: is 1.5"), std::string::npos) << e;
  EXPECT_NE(e.find("from 0 to 1"), std::string::npos) << e;
  j["machine_types"][1]["allreduce_on_cores"] = -0.1;
  EXPECT_NE(error_of(j).find("allreduce_on_cores"), std::string::npos);
}

TEST(Catalog, WithoutPricesItIsAClearError) {
  auto j = test::catalog_json();
  j["machine_types"][1].erase("price_per_hour");
  const auto e = error_of(j);
  EXPECT_NE(e.find("machine_types[1] (cpu.large).price_per_hour: missing"), std::string::npos) << e;
  EXPECT_NE(e.find("without prices"), std::string::npos);
  j = test::catalog_json();
  j["machine_types"][0]["price_per_hour"] = 0;
  EXPECT_NE(error_of(j).find("price_per_hour: must be greater than 0"), std::string::npos);
}

TEST(Catalog, OtherBadInputsNameTheField) {
  EXPECT_THROW(parse_catalog("[1, 2"), CatalogError);
  auto j = test::catalog_json();
  j["version"] = 7;
  EXPECT_NE(error_of(j).find("version"), std::string::npos);
  j = test::catalog_json();
  j["machine_types"] = nlohmann::json::array();
  EXPECT_NE(error_of(j).find("machine_types: empty"), std::string::npos);
  j = test::catalog_json();
  j["machine_types"][2]["name"] = "cpu.small";
  EXPECT_NE(error_of(j).find("appears twice"), std::string::npos);
  j = test::catalog_json();
  j["machine_types"][0].erase("device_memory_gib");
  EXPECT_NE(error_of(j).find("device_memory_bytes: missing"), std::string::npos);
  j = test::catalog_json();
  j["machine_types"][0]["network_gbps"] = -1;
  EXPECT_NE(error_of(j).find("network_gbps"), std::string::npos);
  EXPECT_THROW(load_catalog("/nonexistent/catalog.json"), CatalogError);
}

}  // namespace
}  // namespace tula::plan
