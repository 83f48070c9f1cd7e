#include "cli/schema_options.hpp"

#include <type_traits>

#include "tune/option_schema.hpp"

namespace tula::cli {
namespace {

CLI::Option* add_flag(CLI::App& sub, const tune::OptionSpec& s, bool& field) {
  // "!--no-x" clears a field whose default is true; "--x,!--no-x" takes both.
  const std::string name = s.negated   ? "!" + s.flag()
                           : s.both_ways ? s.flag() + ",!--no-" + s.flag().substr(2)
                                         : s.flag();
  return sub.add_flag(name, field, s.help);
}

}  // namespace

void add_schema_options(CLI::App& sub, tune::TuneOptions& o) {
  for (const auto& s : tune::option_specs()) {
    if (!s.in_cli) continue;
    CLI::Option* added = std::visit(
        [&](auto* field) -> CLI::Option* {
          if constexpr (std::is_same_v<std::remove_pointer_t<decltype(field)>, bool>) {
            return add_flag(sub, s, *field);
          } else {
            return sub.add_option(s.flag(), *field, s.help);
          }
        },
        s.field(o));
    if (s.show_default && s.kind != tune::FieldKind::Flag) added->capture_default_str();
  }
}

}  // namespace tula::cli
