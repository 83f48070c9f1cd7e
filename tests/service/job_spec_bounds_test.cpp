// The values a job spec may hold: every number within bounds named in the
// refusal, the model and data set names the engine knows, nested values
// refused with a short message, and docs/api.md's table agreeing with the code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "helpers/temp_dir.hpp"
#include "service/job_spec.hpp"
#include "service/job_spec_fields.hpp"
#include "service/spec_refusal.hpp"

namespace tula::service {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json with(const std::string& field, const json& value) {
  json spec = {{"model", "small_cnn"}, {"dataset", "synthetic"}, {"epochs", 2}};
  spec[field] = value;
  return spec;
}

TEST(JobSpecBounds, NumbersOutsideTheirRangeAreRefusedNamingFieldAndRange) {
  EXPECT_EQ(refusal(with("epochs", 100000)), "field 'epochs' must be a number from 0 to 10000 (got 100000)");
  // 2^32 + 1 used to pass the check and wrap to 1 in an int, failing the job at its start.
  EXPECT_EQ(refusal(with("max_retries", 4294967297)),
            "field 'max_retries' must be an integer from 0 to 1000 (got 4294967297)");
  EXPECT_NE(refusal(with("lr", 0)).find("above 0 and at most 100"), std::string::npos);
  EXPECT_NE(refusal(json{{"target_accuracy", 1.0}}).find("from 0 to below 1"), std::string::npos);
  EXPECT_NE(refusal(with("momentum", -0.1)).find("'momentum'"), std::string::npos);
  EXPECT_NE(refusal(with("seed", -3)).find("from 0 to 18446744073709551615"), std::string::npos);
  EXPECT_EQ(refusal(with("seed", std::numeric_limits<uint64_t>::max())), "accepted");
  EXPECT_EQ(refusal(with("synthetic_size", 100'000'000)), "accepted");
}

// tune's words after the flag, the API's after the field: one check, one message (tune/option_schema.hpp).
std::string tune_refusal(const std::string& field, const json& value) {
  tune::TuneOptions o;
  o.job.out_dir = "/tmp/job";
  o.job.epochs = 2;
  tune::set_option(tune::option(field), o, value);
  try {
    o.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(JobSpecBounds, TheCliAndTheApiRefuseAnOutOfRangeValueInTheSameWords) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"target_accuracy", 1.5}, {"target_accuracy", -0.25}, {"momentum", 1.0},     {"lr", 0.0},
      {"epochs", 100000.5},     {"eval_crop", 1.25},        {"max_retries", 1001}, {"pilot_workers", 2000}};
  for (const auto& [field, value] : cases) {
    const tune::OptionSpec& s = tune::option(field);
    const std::string api = refusal(with(field, value)), cli = tune_refusal(field, value);
    const std::string words = *tune::bound_refusal(s, value);
    EXPECT_EQ(api, "field '" + field + "' " + words) << api;
    EXPECT_EQ(cli, s.flag() + " " + words) << cli;
  }
  // "Not given" is a value on the command line (pilot_workers 0: by the
  // objective) and an absent field in a spec: the API refuses the value.
  EXPECT_EQ(tune_refusal("pilot_workers", 0), "accepted");
  EXPECT_EQ(refusal(with("pilot_workers", 0)), "field 'pilot_workers' must be an integer from 1 to 1024 (got 0)");
  EXPECT_EQ(tune_refusal("validation_size", -1), "accepted");
  EXPECT_NE(refusal(with("validation_size", -1)), "accepted");
  EXPECT_EQ(refusal(with("target_accuracy", 1.5)), "field 'target_accuracy' must be a number from 0 to below 1 (got 1.5)");
  EXPECT_EQ(tune_refusal("target_accuracy", 1.5), "--target-accuracy must be a number from 0 to below 1 (got 1.5)");
}

TEST(JobSpecBounds, EveryNumericFieldHasAnUpperBoundInItsMessage) {
  for (const auto& f : spec_fields()) {
    if (f.kind != FieldKind::Number && f.kind != FieldKind::Integer) continue;
    const json too_big = f.kind == FieldKind::Number ? json(f.range.hi * 2 + 1) : (f.integer_range.hi == UINT64_MAX ? json(-1) : json(f.integer_range.hi + 1));
    const std::string m = refusal(with(f.name, too_big));
    EXPECT_NE(m.find("field '" + std::string(f.name) + "' must be " + describe_field(f)), std::string::npos) << m;
  }
}

TEST(JobSpecBounds, ANumberTooLargeForADoubleNamesTheFieldAndItsRange) {
  try {
    (void)parse_job_spec(R"({"model": "small_cnn", "epochs": 1e400})");
    ADD_FAILURE() << "1e400 was read";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("field 'epochs'"), std::string::npos) << m;
    EXPECT_NE(m.find("from 0 to 10000"), std::string::npos) << m;
  }
}

TEST(JobSpecBounds, TheObjectivesLimitsAndStartAtAreBounded) {
  EXPECT_EQ(refusal(with("objective", "deadline=8760h")), "accepted");
  EXPECT_NE(refusal(with("objective", "deadline=8761")).find("at most 8760 hours"), std::string::npos);
  EXPECT_NE(refusal(with("objective", "budget=2e9")).find("budget must be at most"), std::string::npos);
  EXPECT_EQ(refusal(with("start_at", "2x64x2")), "accepted");
  EXPECT_NE(refusal(with("start_at", "1x99999999")).find("start_at '1x99999999'"), std::string::npos);
  EXPECT_NE(refusal(with("objective", std::string(65, 'k'))).find("at most 64 characters"), std::string::npos);
}

// Deeper nesting never reaches a spec: the request parser refuses it
// (request_json_test.cpp). A value built here is copied recursively by the
// test's own helpers, so it stays at a depth any stack holds.
TEST(JobSpecBounds, ADeeplyNestedValueIsRefusedWithAShortMessage) {
  json deep = 1;
  for (int i = 0; i < 1000; ++i) deep = json::array({std::move(deep)});
  const std::string m = refusal(with("epochs", deep));
  EXPECT_NE(m.find("field 'epochs' must be a number"), std::string::npos);
  EXPECT_NE(m.find("(got [[[...]]])"), std::string::npos) << m.substr(0, 300);
}

TEST(JobSpecNames, AModelOutsideTheZooAndAnUnknownDataSetAreRefused) {
  const std::string model = refusal(with("model", "resnet1000"));
  EXPECT_NE(model.find("model 'resnet1000' is not a model of the zoo"), std::string::npos) << model;
  EXPECT_NE(model.find("mobilenet_v3_large"), std::string::npos) << model;
  const std::string dataset = refusal(with("dataset", "imagenet"));
  EXPECT_NE(dataset.find("dataset 'imagenet' is not a data set this server reads"), std::string::npos) << dataset;
  EXPECT_EQ(refusal(with("dataset", "Fashion-MNIST")), "accepted");
  EXPECT_EQ(refusal(with("dataset", "cifar10")), "accepted");
}

TEST(JobSpecNames, AModelGivenAsAPathMustBeATorchScriptFileUnderARoot) {
  testing::TempDir dir;
  const SpecRules rules{{dir.str()}, "local"};
  EXPECT_EQ(refusal(with("model", dir.file("net.pt")), rules), "accepted");
  EXPECT_NE(refusal(with("model", "/etc/net.pt"), rules).find("outside the server's data roots"), std::string::npos);
  EXPECT_NE(refusal(with("model", dir.file("net.onnx")), rules).find("ending in .pt"), std::string::npos);
}

TEST(JobSpecNames, AnImageFolderNeedsItsDirectoryUnderARoot) {
  testing::TempDir dir;
  const SpecRules rules{{dir.str()}, "local"};
  auto folder = with("dataset", "imagefolder");
  const std::string missing = refusal(folder, rules);
  EXPECT_NE(missing.find("imagefolder needs data_dir"), std::string::npos) << missing;
  folder["data_dir"] = dir.str();
  folder["image_size"] = 28;
  folder["eval_crop"] = 1;
  folder["no_augment"] = true;
  EXPECT_EQ(refusal(folder, rules), "accepted");
  folder["eval_crop"] = 1.5;
  EXPECT_NE(refusal(folder, rules).find("eval_crop"), std::string::npos);
}

TEST(JobSpecPaths, ALinkThatLeadsOutsideSinceTheSubmitIsFoundAtTheRecheck) {
  testing::TempDir dir;
  const fs::path root = dir.path() / "data";
  fs::create_directories(root);
  fs::create_directories(dir.path() / "outside");
  fs::create_symlink(dir.path() / "later", root / "link");  // dangles now
  const SpecRules rules{{root.string()}, "local"};
  const json spec = with("data_dir", (root / "link").string());
  ASSERT_EQ(refusal(spec, rules), "accepted") << "a dangling link is taken as written";
  EXPECT_NO_THROW(recheck_spec_paths(spec, rules));
  fs::remove(root / "link");
  fs::create_symlink(dir.path() / "outside", root / "link");
  try {
    recheck_spec_paths(spec, rules);
    ADD_FAILURE() << "the moved link passed";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("data_dir '" + (root / "link").string() + "' now leads to " + (dir.path() / "outside").string()),
              std::string::npos) << m;
  }
}

// docs/api.md's table of fields, row by row: "| `name` | what it takes | why |".
std::map<std::string, std::string> documented_fields() {
  std::ifstream in(std::string(TULA_SOURCE_DIR) + "/docs/api.md");
  std::map<std::string, std::string> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t name_end = line.find('`', 3);
    const size_t takes_end = line.find(" |", name_end + 3);
    if (name_end == std::string::npos || takes_end == std::string::npos) continue;
    rows[line.substr(3, name_end - 3)] = line.substr(name_end + 4, takes_end - name_end - 4);
  }
  return rows;
}

TEST(JobSpecDocs, TheApiDocsListEveryFieldWithWhatItTakes) {
  const auto rows = documented_fields();
  for (const auto& [name, takes] : rows) {
    EXPECT_NE(find_spec_field(name), nullptr) << "docs/api.md lists `" << name << "`, which the API does not take";
  }
  for (const auto& f : spec_fields()) {
    const auto row = rows.find(f.name);
    ASSERT_NE(row, rows.end()) << "docs/api.md has no row for `" << f.name << "`";
    EXPECT_NE(row->second.find(describe_field(f)), std::string::npos)
        << "docs/api.md says `" << f.name << "` takes \"" << row->second << "\"; the code: " << describe_field(f);
  }
}

}  // namespace
}  // namespace tula::service
