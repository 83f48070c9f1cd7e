// PNG files through libpng, decoded whole (PNG has no cheaper partial or
// scaled decode) to 8-bit gray or RGB: palettes expanded, 16-bit samples
// scaled to 8 bits, alpha dropped (as PIL's convert("RGB") drops it, with no
// compositing).
#pragma once
#include <cstdint>
#include <vector>

#include "data/pixels.hpp"

namespace tula::data {

// Throws BadImage with libpng's message for a corrupt or truncated file.
PixelWindow decode_png(const std::vector<uint8_t>& bytes);

}  // namespace tula::data
