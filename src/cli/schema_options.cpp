#include "cli/schema_options.hpp"

#include <type_traits>

namespace tula::cli {
namespace {

CLI::Option* add_flag(CLI::App& sub, const tune::OptionSpec& s, bool& field) {
  // "!--no-x" clears a field whose default is true; "--x,!--no-x" takes both.
  const std::string flag = s.flag();
  std::string name = s.negated ? "!" + flag : flag;
  if (s.both_ways) name = s.negated ? "--" + flag.substr(5) + ",!" + flag : flag + ",!--no-" + flag.substr(2);
  return sub.add_flag(name, field, s.help);
}

}  // namespace

CLI::Option* add_schema_option(CLI::App& sub, const tune::OptionSpec& s, tune::OptionValue field) {
  CLI::Option* added = std::visit(
      [&](auto* f) -> CLI::Option* {
        if constexpr (std::is_same_v<std::remove_pointer_t<decltype(f)>, bool>) {
          return add_flag(sub, s, *f);
        } else {
          return sub.add_option(s.flag(), *f, s.help);
        }
      },
      field);
  if (s.show_default && s.kind != tune::FieldKind::Flag) added->capture_default_str();
  return added;
}

void add_schema_options(CLI::App& sub, tune::TuneOptions& o) {
  for (const auto& s : tune::option_specs()) {
    if (s.in_cli) add_schema_option(sub, s, s.field(o));
  }
}

}  // namespace tula::cli
