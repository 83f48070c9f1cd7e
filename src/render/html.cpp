#include "render/html.hpp"

#include <cmath>
#include <cstdio>

#include "common/text.hpp"
#include "render/escape.hpp"

namespace tula::render::html {

namespace {
bool usable(std::optional<double> v) { return v && std::isfinite(*v); }
}  // namespace

std::string seconds(std::optional<double> s, const std::string& missing) {
  return usable(s) ? common::format_seconds(*s) : missing;
}

std::string money(std::optional<double> amount, const std::string& currency, const std::string& missing) {
  if (!usable(amount)) return missing;
  const double a = *amount;
  char buf[64];
  // Cents from one up; three significant digits below, so small bills differ.
  if (std::abs(a) < 1 && a != 0) {
    std::snprintf(buf, sizeof buf, "%.3g", a);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", a);
  }
  if (currency.empty() || currency == "USD") return std::string(a < 0 ? "-$" : "$") + (buf[0] == '-' ? buf + 1 : buf);
  return std::string(buf) + " " + currency;
}

std::string percent(std::optional<double> fraction, int significant, const std::string& missing) {
  return usable(fraction) ? common::format_number(100 * *fraction, significant) + "%" : missing;
}

std::string signed_percent(std::optional<double> fraction, const std::string& missing) {
  if (!usable(fraction)) return missing;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * *fraction);
  return buf;
}

std::string number(std::optional<double> v, int significant, const std::string& missing) {
  return usable(v) ? common::format_number(*v, significant) : missing;
}

Cell text(const std::string& s, const std::string& css_class) { return {escape(s), css_class}; }
Cell raw(const std::string& h, const std::string& css_class) { return {h, css_class}; }
Cell num(const std::string& s) { return {escape(s), "num"}; }

Table::Table(std::vector<std::string> headers, std::string css_class)
    : headers_(std::move(headers)), css_class_(std::move(css_class)) {}

Table& Table::row(std::vector<Cell> cells, const std::string& row_class) {
  rows_.emplace_back(row_class, std::move(cells));
  return *this;
}

std::string Table::str() const {
  auto cls = [](const std::string& c) { return c.empty() ? std::string() : " class=\"" + escape(c) + "\""; };
  std::string o = "<table" + cls(css_class_) + ">\n";
  if (!headers_.empty()) {
    o += "<thead><tr>";
    for (const auto& h : headers_) o += "<th>" + escape(h) + "</th>";
    o += "</tr></thead>\n";
  }
  o += "<tbody>\n";
  for (const auto& [row_class, cells] : rows_) {
    o += "<tr" + cls(row_class) + ">";
    for (const auto& c : cells) o += "<td" + cls(c.css_class) + ">" + c.html + "</td>";
    o += "</tr>\n";
  }
  o += "</tbody>\n</table>\n";
  return o;
}

}  // namespace tula::render::html
