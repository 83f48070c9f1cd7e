#include "tune/cost_meter.hpp"

namespace tula::tune {

void CostMeter::accrue(double now, double price_per_hour, double nodes) {
  if (accounted_at_ >= 0 && now > accounted_at_) spent_ += (now - accounted_at_) / 3600.0 * nodes * price_per_hour;
  if (now > accounted_at_) accounted_at_ = now;
}

}  // namespace tula::tune
