// Kneedle (Satopaa, Albrecht, Irwin, Raghavan, "Finding a 'Kneedle' in a
// Haystack: Detecting Knee Points in System Behavior", ICDCS workshops 2011).
// Offline form: normalize x and y to [0, 1]; turn the curve into a concave
// increasing one (flipping x and/or y as its shape requires); the difference
// curve d = y' - x' peaks where the curve bends most relative to the chord.
// A local maximum of d is a knee when d then falls below
// T = d_max - S * mean(x' spacing) before the next local maximum.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace tula::plan {

enum class Curve { Concave, Convex };
enum class Direction { Increasing, Decreasing };
enum class Scale { Linear, Log };  // Log: normalize log(x), log(y) (both must be positive)

struct KneedleResult {
  std::optional<size_t> knee;   // index (into the input) of the knee with the largest difference
  std::vector<size_t> knees;    // every knee Kneedle declared, in scan order
  std::vector<double> difference;  // d per input index
  size_t max_difference = 0;    // argmax of d: the fallback when no knee is declared
};

// x must be strictly increasing. Fewer than 3 points: no knee.
KneedleResult kneedle(const std::vector<double>& x, const std::vector<double>& y, Curve curve, Direction direction,
                      double sensitivity = 1.0, Scale scale = Scale::Linear);

}  // namespace tula::plan
