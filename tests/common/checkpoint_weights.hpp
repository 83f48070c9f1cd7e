// Moved to helpers/checkpoint_weights.hpp; tests/common/ is for the tests of src/common.
// Kept only for the suites that still include it from here (tests/train):
// delete once they include "helpers/checkpoint_weights.hpp".
#pragma once
#include "helpers/checkpoint_weights.hpp"
