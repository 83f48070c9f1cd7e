#include "records/metrics_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/text.hpp"
#include "records/record_error.hpp"

namespace tula::records {

namespace {

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// The record on one line, or nullopt for a blank line or an unknown type.
std::optional<MetricsRecord> parse_line(const std::string& line, const std::string& where) {
  if (blank(line)) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw RecordError(where + ": not a JSON record (" + e.what() + ")");
  }
  return metrics_record_from_json(j, where);
}

}  // namespace

MetricsWriter::MetricsWriter(const std::string& path, bool append) : path_(path) {
  if (path.empty()) return;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file_) throw std::runtime_error("cannot open metrics file " + path + " for writing");
}

MetricsWriter::~MetricsWriter() {
  if (file_) std::fclose(file_);
}

void MetricsWriter::write(MetricsRecord record) {
  if (!file_) return;
  std::visit([](auto& r) { r.time = common::unix_now(); }, record);
  // One write per line, so a reader never sees two records interleaved.
  const std::string line = to_json(record).dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    throw std::runtime_error("cannot write to metrics file " + path_);
  }
}

std::vector<MetricsRecord> MetricsTail::read_new() {
  std::vector<MetricsRecord> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: a line still being written
    offset_ += line.size() + 1;
    ++line_number_;
    try {
      if (auto record = parse_line(line, fmt::format("{}:{}", path_, line_number_))) out.push_back(std::move(*record));
    } catch (const RecordError& e) {
      if (skipped_++ == 0) first_problem_ = e.what();
    }
  }
  return out;
}

std::vector<MetricsRecord> read_metrics(std::istream& in, const std::string& name) {
  std::vector<MetricsRecord> out;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (auto record = parse_line(line, fmt::format("{}:{}", name, number))) out.push_back(std::move(*record));
  }
  return out;
}

std::vector<MetricsRecord> read_metrics_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RecordError("cannot read metrics file " + path);
  return read_metrics(in, path);
}

}  // namespace tula::records
