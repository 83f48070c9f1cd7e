#include "render/escape.hpp"

namespace tula::render {

namespace {

// The entity for a character markup gives a meaning to; nullptr for the rest.
const char* entity(char c) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return "&#39;";  // &apos; is XML only; HTML 4 readers do not know it
    default:
      return nullptr;
  }
}

bool forbidden_in_xml(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 && c != '\t' && c != '\n' && c != '\r';
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (const char* e = entity(c)) {
      out += e;
    } else {
      out += forbidden_in_xml(c) ? ' ' : c;
    }
  }
  return out;
}

}  // namespace tula::render
