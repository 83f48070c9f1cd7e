#include "tune/report_html.hpp"

namespace tula::tune {
std::string render_report_html(const nlohmann::json& report) {
  return "<!DOCTYPE html><html><body><pre>" + report.dump(2) + "</pre></body></html>\n";
}
}  // namespace tula::tune
