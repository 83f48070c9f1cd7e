// Flags registered from the option schema (tune/option_schema.hpp): one CLI11
// option per entry, with its help and, where it has one, its default.
#pragma once
#include <CLI/CLI.hpp>

#include "tune/option_schema.hpp"

namespace tula::cli {

// The option `s` as a flag of `sub`, bound to `field` (where the command keeps it).
CLI::Option* add_schema_option(CLI::App& sub, const tune::OptionSpec& s, tune::OptionValue field);

// `tula tune`'s flags: every option of the schema that has one, bound to its field of `o`.
void add_schema_options(CLI::App& sub, tune::TuneOptions& o);

}  // namespace tula::cli
