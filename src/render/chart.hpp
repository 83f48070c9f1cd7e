// Charts as inline SVG: an x/y chart with axes, tick labels and a legend,
// lines, dots, reference lines, shaded bands, intervals and labelled
// markers; and a figure of several charts side by side as one SVG file.
// What they return needs nothing outside it (no script, no font, no URL but
// the SVG namespace), is well-formed XML, and holds every string given to it
// escaped. No LibTorch here.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "render/axis.hpp"

namespace tula::render {

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

// A faint line between two points in data units: a prediction's interval
// drawn across its point.
struct Interval {
  std::pair<double, double> from, to;
  std::string color = "#1f77b4";
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
  std::vector<Interval> intervals;
  std::vector<Marker> markers;
  std::string empty_text = "nothing was recorded";  // shown when no series has a point
  double width = 680;
  double plot_height = 210;
};

// One <svg> element, for a page to hold inline.
std::string chart_svg(const Chart& chart);

// Charts side by side under a title, their plot areas level, with lines of
// notes under them: a figure for a file of its own.
struct Figure {
  std::string title;
  std::vector<Chart> panels;
  std::vector<std::string> notes;
};

// A standalone SVG document (XML declaration and one <svg> element).
std::string figure_svg(const Figure& figure);

}  // namespace tula::render
