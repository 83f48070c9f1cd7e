// Moved to helpers/free_port.hpp; tests/common/ is for the tests of src/common.
// Kept only for the suites that still include it from here (tests/train):
// delete once they include "helpers/free_port.hpp".
#pragma once
#include "helpers/free_port.hpp"
