#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace tula::tune {
std::string render_report_html(const nlohmann::json& report);
}
