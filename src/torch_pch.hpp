// The LibTorch headers every engine file needs, compiled once (see src/CMakeLists.txt).
#pragma once
#include <torch/torch.h>
