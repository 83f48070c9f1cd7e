// A chart's axes: what an axis shows, how data maps onto pixels on a linear
// or a log scale, where the ticks go and how their labels read. The one
// place tick positions are chosen, for every chart and figure. No LibTorch here.
#pragma once
#include <string>
#include <vector>

namespace tula::render {

enum class Unit {
  Number,
  Seconds,  // ticks at round times (1 min, 1 h), labels "5 min"
  Money,    // labels "$12" (or "12 EUR")
  Percent,  // a fraction, labelled "85%"
  Batch,    // a batch size: log ticks at powers of two, labels "512", "2k"
};

enum class ScaleKind {
  Auto,    // log when the positive data span more than 20x, else linear
  Linear,
  Log,     // log whenever some data are positive
};

struct Axis {
  std::string label;
  Unit unit = Unit::Number;
  std::string currency = "USD";  // for Unit::Money
  ScaleKind scale = ScaleKind::Auto;
  bool from_zero = false;  // a linear axis over data >= 0 starts at 0
};

// A tick's label: "2 min", "$0.5", "85%", "2k", "1e+04".
std::string tick_label(double v, const Axis& axis);

// Maps data onto pixels [p0, p1] (p1 < p0 for a y axis, whose pixels grow downwards).
class Scale {
 public:
  // Fitted to the finite values (the positive ones on a log scale), with a
  // little room at both ends.
  static Scale fit(std::vector<double> values, const Axis& axis, double p0, double p1);

  double operator()(double v) const;
  bool log() const { return log_; }
  // Whether the value can be drawn: finite, and positive on a log scale.
  bool drawable(double v) const;
  // At most 8 ticks inside the range.
  std::vector<double> ticks() const;

 private:
  bool inside(double v) const;
  std::vector<double> log_ticks() const;

  bool log_ = false;
  double lo_ = 0, hi_ = 1;  // in data units, or their log10 on a log scale
  double p0_ = 0, p1_ = 1;
  Unit unit_ = Unit::Number;
};

}  // namespace tula::render
