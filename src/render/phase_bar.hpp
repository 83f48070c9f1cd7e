// A job's phases as one horizontal bar of seconds, with a legend of each
// part's time and share of the whole. One <svg> element, well-formed XML,
// needing nothing outside it. No LibTorch here.
#pragma once
#include <string>
#include <vector>

namespace tula::render {

struct Part {
  std::string label;
  double seconds = 0;
  std::string color;
};

// Parts of no time are left out; with none left, the bar says so.
std::string phase_bar_svg(const std::vector<Part>& parts, double width = 680);

}  // namespace tula::render
