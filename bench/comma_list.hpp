// "0.85,0.87" -> {0.85, 0.87}: the lists the replay tools take on their command lines.
#pragma once
#include <sstream>
#include <string>
#include <vector>

inline std::vector<double> comma_list(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stod(item));
  return out;
}
