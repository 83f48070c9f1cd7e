// The SVG elements the charts are made of, written as text. Coordinates are
// pixels with one decimal; styles and extra attributes come from this module
// and are written as they are, while text content is escaped. No LibTorch here.
#pragma once
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tula::render {

using Point = std::pair<double, double>;

// A pixel coordinate as SVG gets it: "12.3".
std::string px(double v);

// About how wide a label is at `font` px (sans-serif averages ~0.56 em): the
// layout needs it and there is no font to measure.
double text_width(const std::string& text, double font = 11);

class SvgWriter {
 public:
  // Opens the <svg> element with its namespace, size, font and <title>.
  void open(double width, double height, const std::string& title);
  // Closes the <svg> element; returns everything written.
  std::string close();

  // Everything drawn until end_group() is shifted by (dx, dy).
  void begin_group(double dx, double dy);
  void end_group();

  void line(double x1, double y1, double x2, double y2, const std::string& style);
  void rect(double x, double y, double w, double h, const std::string& style);
  void circle(double x, double y, double r, const std::string& style);
  void polygon(const std::vector<Point>& points, const std::string& style);
  // Nothing for fewer than two points.
  void polyline(const std::vector<Point>& points, const std::string& style);
  // `attrs` are written as they are; `content` is escaped.
  void text(double x, double y, const std::string& content, const std::string& attrs = "");

 private:
  void points(const std::vector<Point>& pts);
  std::ostringstream out_;
};

}  // namespace tula::render
