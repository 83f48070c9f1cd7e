// Moved to helpers/run_command.hpp; tests/common/ is for the tests of src/common.
// Kept only for the suites that still include it from here (tests/train,
// tests/profile): delete once they include "helpers/run_command.hpp".
#pragma once
#include "helpers/run_command.hpp"
