// Small pieces for writing HTML by hand: numbers for people, and a table
// builder whose text goes through render::escape. What they write is also
// well-formed XML (every element closed, only the five XML entities), so a
// page can be checked with an XML parser. No LibTorch here.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tula::render::html {

// "not measured" (or `missing`) for nullopt; else the formatted value.
std::string seconds(std::optional<double> s, const std::string& missing = "not measured");
std::string money(std::optional<double> amount, const std::string& currency,
                  const std::string& missing = "not measured");
std::string percent(std::optional<double> fraction, int significant = 3, const std::string& missing = "not measured");
// A relative error as a signed percentage: "+3.2%", "-0.6%".
std::string signed_percent(std::optional<double> fraction, const std::string& missing = "not measured");
std::string number(std::optional<double> v, int significant = 4, const std::string& missing = "not measured");

// One table cell: HTML already made safe. Build with text() or raw().
struct Cell {
  std::string html;
  std::string css_class;  // "" or e.g. "num"
};
Cell text(const std::string& s, const std::string& css_class = "");  // escapes s
Cell raw(const std::string& html, const std::string& css_class = "");
Cell num(const std::string& s);  // escaped, right-aligned

class Table {
 public:
  explicit Table(std::vector<std::string> headers, std::string css_class = "");
  Table& row(std::vector<Cell> cells, const std::string& row_class = "");
  size_t rows() const { return rows_.size(); }
  std::string str() const;

 private:
  std::vector<std::string> headers_;
  std::string css_class_;
  std::vector<std::pair<std::string, std::vector<Cell>>> rows_;
};

}  // namespace tula::render::html
