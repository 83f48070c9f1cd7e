// The records of one type in a `tula train` metrics file (JSON lines), in order.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::testing {

inline std::vector<nlohmann::json> records_of_type(const std::filesystem::path& metrics, const std::string& type) {
  std::vector<nlohmann::json> out;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == type) out.push_back(j);
  }
  return out;
}

}  // namespace tula::testing
