// The tune report's charts as inline SVG: an x/y chart with axes, tick
// labels and a legend (log scale on an axis whose positive data span more than
// 20x), lines, dots, reference lines, shaded bands and labelled markers; and a
// stacked bar of the job's phases. Each render returns one <svg> element that
// needs nothing outside it (no script, no font, no URL but the SVG namespace)
// and is well-formed XML. No LibTorch here.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tula::tune::charts {

enum class Unit { Number, Seconds, Money, Percent };

struct Axis {
  std::string label;
  Unit unit = Unit::Number;
  std::string currency = "USD";  // for Unit::Money
  bool log_allowed = true;       // log scale when the positive data span > 20x
  bool from_zero = false;        // a linear axis over data >= 0 starts at 0
};

enum class Style {
  Line,      // solid line
  Dashed,    // dashed line
  Dots,      // dots only
  LineDots,  // line with dots (dots left out past 150 points)
  Faint,     // small pale dots, for a cloud of background points
  Step,      // a value that holds until the next point
};

struct Series {
  std::string name;  // in the legend; empty: left out of it
  std::vector<std::pair<double, double>> points;
  std::string color = "#1f77b4";
  Style style = Style::LineDots;
  std::vector<double> breaks = {};  // x values where the line is not drawn across (a restart)
};

// A horizontal (y = at) or vertical (x = at) reference line with a label.
struct Rule {
  double at = 0;
  std::string label;
  std::string color = "#555555";
  bool dashed = true;
  bool in_legend = true;  // horizontal rules: label in the legend (else at the line's end)
};

// A shaded x range (a restart, the profiling phase), labelled inside where
// the label fits.
struct Band {
  double from = 0, to = 0;
  std::string label;
};

enum class Shape { Ring, Diamond, Star, Square };

// One labelled point (the knee, the chosen configuration, the measured outcome).
struct Marker {
  double x = 0, y = 0;
  Shape shape = Shape::Ring;
  std::string label;
  std::string color = "#d62728";
  bool label_below_left = false;  // else above and to the right
};

struct Chart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<Rule> hlines, vlines;
  std::vector<Band> bands;
  std::string band_legend;  // the legend's entry for the bands; empty: none
  std::vector<Marker> markers;
  std::string empty_text = "nothing was recorded";  // shown when no series has a point
  double width = 680;
  double plot_height = 210;
};

std::string render(const Chart& chart);

// The job's phases as one horizontal bar of seconds, with a legend of each
// part's time and share of the whole.
struct Part {
  std::string label;
  double seconds = 0;
  std::string color;
};
std::string phase_bar(const std::vector<Part>& parts, double width = 680);

}  // namespace tula::tune::charts
