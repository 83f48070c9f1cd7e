// One prediction as a short human-readable report (what `tula predict`
// prints, and the plan's chosen configuration) and as JSON.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "predict/predictor.hpp"

namespace tula::predict {

nlohmann::json to_json(const Interval& i);
nlohmann::json to_json(const Prediction& p);
std::string format_prediction(const Prediction& p);

}  // namespace tula::predict
