// Text made safe to write into HTML and XML (SVG) alike. No LibTorch here.
#pragma once
#include <string>
#include <string_view>

namespace tula::render {

// A text node or a quoted attribute value: & < > " ' become entities, and
// control characters XML forbids (all below 0x20 but tab, newline and
// carriage return) become spaces, so that names from reports (a model, a data
// set, a machine) can never break the markup around them.
std::string escape(std::string_view text);

}  // namespace tula::render
