// Whether text is well-formed XML, for the tests of what Tula draws for
// people (report pages, charts, figures): a small checker of its own that
// needs nothing, then the XML parser of /usr/bin/python3 where the machine
// has one.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tula::testing {

inline size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

// "" when every element is closed in order, every attribute quoted in pairs
// and every & starts an entity; else the first problem.
inline std::string well_formed(const std::string& s) {
  std::vector<std::string> open;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '&') {
      const size_t semi = s.find(';', i);
      const std::string ent = semi == std::string::npos ? "" : s.substr(i, semi - i + 1);
      const bool ok = ent == "&amp;" || ent == "&lt;" || ent == "&gt;" || ent == "&quot;" ||
                      (ent.size() > 3 && ent[1] == '#' &&
                       std::all_of(ent.begin() + 2, ent.end() - 1, [](char c) { return std::isdigit(c); }));
      if (!ok) return "a bare & at " + std::to_string(i);
      i = semi + 1;
      continue;
    }
    if (s[i] != '<') {
      if (s[i] == '>') return "a bare > at " + std::to_string(i) + ": " + s.substr(i > 40 ? i - 40 : 0, 80);
      ++i;
      continue;
    }
    // Comments and the XML declaration hold no elements.
    for (const auto& [start, stop] : {std::pair{"<!--", "-->"}, std::pair{"<?", "?>"}}) {
      if (s.compare(i, std::string(start).size(), start) == 0) {
        const size_t end = s.find(stop, i);
        if (end == std::string::npos) return std::string("an unclosed ") + start;
        i = end + std::string(stop).size();
      }
    }
    if (i >= s.size() || s[i] != '<') continue;
    const size_t end = s.find('>', i);
    if (end == std::string::npos) return "an unclosed tag at " + std::to_string(i);
    const std::string tag = s.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.rfind("!DOCTYPE", 0) == 0) continue;
    if (tag.find('<') != std::string::npos) return "a < inside tag " + tag;
    if (count_of(tag, "\"") % 2) return "unbalanced quotes in " + tag;
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">");
      }
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
    if (tag.back() != '/') open.push_back(name);
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

// "" when /usr/bin/python3's XML parser (xml.dom.minidom) reads `text`, or
// when the machine has no python3; else what the parser said.
inline std::string python_xml_problem(const std::string& text) {
  if (!std::filesystem::exists("/usr/bin/python3")) return "";
  static std::atomic<int> serial{0};
  const auto path = std::filesystem::temp_directory_path() /
                    ("tula-xml-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + ".xml");
  const std::string log = path.string() + ".log";
  std::ofstream(path) << text;
  const std::string command = "/usr/bin/python3 -c 'import sys,xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
                              path.string() + " > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream said;
  said << std::ifstream(log).rdbuf();
  std::filesystem::remove(path);
  std::filesystem::remove(log);
  if (status == 0) return "";
  return said.str().empty() ? "python3 exited with status " + std::to_string(status) : said.str();
}

// Both checks; "" when `text` is well-formed XML, else the first problem found.
inline std::string xml_problem(const std::string& text) {
  if (const auto problem = well_formed(text); !problem.empty()) return problem;
  return python_xml_problem(text);
}

}  // namespace tula::testing
