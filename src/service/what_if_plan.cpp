#include "service/what_if_plan.hpp"

#include "plan/catalog.hpp"
#include "plan/local_catalog.hpp"
#include "plan/objective.hpp"
#include "plan/planner.hpp"
#include "plan/report.hpp"
#include "predict/error.hpp"
#include "predict/profile.hpp"

namespace tula::service {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& message) { throw PlanRequestError(400, message); }

double number_field(const json& body, const char* key, double fallback) {
  if (!body.contains(key)) return fallback;
  if (!body[key].is_number() || body[key].get<double>() < 0) bad(std::string("field '") + key + "' must be a non-negative number");
  return body[key].get<double>();
}

}  // namespace

json plan_what_if(const json& body) {
  if (!body.is_object()) bad("the body must be a JSON object");
  for (const auto& [k, v] : body.items()) {
    if (k != "profile" && k != "catalog" && k != "objective" && k != "price_per_hour" && k != "epochs" && k != "draws") {
      bad("unknown field '" + k + "' (known: profile, catalog, objective, price_per_hour, epochs, draws)");
    }
  }
  if (!body.contains("profile") || !body["profile"].is_object()) {
    bad("field 'profile' is required: a profile as `tula profile` writes it (a JSON object)");
  }
  if (body.contains("objective") && !body["objective"].is_string()) bad("field 'objective' must be a string");
  if (body.contains("catalog") && !body["catalog"].is_object()) bad("field 'catalog' must be a catalog (a JSON object)");
  const double draws = number_field(body, "draws", 400);
  if (draws > 5000) bad("field 'draws' must be at most 5000");
  try {
    const auto objective = plan::parse_objective(body.value("objective", "knee"));
    const predict::Profile profile = predict::profile_from_json(body["profile"]);
    const plan::Catalog catalog = body.contains("catalog") ? plan::catalog_from_json(body["catalog"])
                                                           : plan::local_catalog(profile, number_field(body, "price_per_hour", 0.10));
    plan::PlannerOptions options;
    options.predictor.epochs = number_field(body, "epochs", 0);
    options.predictor.draws = static_cast<int>(draws);
    const plan::Planner planner(profile, catalog, options);
    return plan::to_json(planner.plan(objective));
  } catch (const predict::InfeasibleError& e) {
    throw PlanRequestError(422, e.what());
  } catch (const predict::ProfileError& e) {
    bad(e.what());
  } catch (const std::invalid_argument& e) {
    bad(e.what());
  } catch (const json::exception& e) {
    bad(std::string("the profile or catalog is not what tula writes: ") + e.what());
  }
}

}  // namespace tula::service
