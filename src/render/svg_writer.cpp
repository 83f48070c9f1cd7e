#include "render/svg_writer.hpp"

#include <cstdio>

#include "render/escape.hpp"

namespace tula::render {

namespace {
const char* const kFont = "Helvetica, Arial, sans-serif";
}  // namespace

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

double text_width(const std::string& text, double font) { return 0.56 * font * static_cast<double>(text.size()); }

void SvgWriter::open(double width, double height, const std::string& title) {
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(width) << "\" height=\"" << px(height)
       << "\" viewBox=\"0 0 " << px(width) << " " << px(height) << "\" font-family=\"" << kFont << "\" role=\"img\">\n"
       << "<title>" << escape(title) << "</title>\n";
}

std::string SvgWriter::close() {
  out_ << "</svg>\n";
  return out_.str();
}

void SvgWriter::begin_group(double dx, double dy) {
  out_ << "<g transform=\"translate(" << px(dx) << " " << px(dy) << ")\">\n";
}

void SvgWriter::end_group() { out_ << "</g>\n"; }

void SvgWriter::line(double x1, double y1, double x2, double y2, const std::string& style) {
  out_ << "<line x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\"" << px(x2) << "\" y2=\"" << px(y2)
       << "\" style=\"" << style << "\"/>\n";
}

void SvgWriter::rect(double x, double y, double w, double h, const std::string& style) {
  out_ << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w) << "\" height=\"" << px(h)
       << "\" style=\"" << style << "\"/>\n";
}

void SvgWriter::circle(double x, double y, double r, const std::string& style) {
  out_ << "<circle cx=\"" << px(x) << "\" cy=\"" << px(y) << "\" r=\"" << px(r) << "\" style=\"" << style << "\"/>\n";
}

void SvgWriter::points(const std::vector<Point>& pts) {
  out_ << " points=\"";
  for (const auto& [x, y] : pts) out_ << px(x) << "," << px(y) << " ";
  out_ << "\"";
}

void SvgWriter::polygon(const std::vector<Point>& pts, const std::string& style) {
  out_ << "<polygon";
  points(pts);
  out_ << " style=\"" << style << "\"/>\n";
}

void SvgWriter::polyline(const std::vector<Point>& pts, const std::string& style) {
  if (pts.size() < 2) return;
  out_ << "<polyline";
  points(pts);
  out_ << " style=\"fill:none;" << style << "\"/>\n";
}

void SvgWriter::text(double x, double y, const std::string& content, const std::string& attrs) {
  out_ << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\"" << (attrs.empty() ? "" : " ") << attrs << ">"
       << escape(content) << "</text>\n";
}

}  // namespace tula::render
