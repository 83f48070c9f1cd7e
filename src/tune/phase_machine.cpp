#include "tune/phase_machine.hpp"

#include <stdexcept>
#include <string>

namespace tula::tune {

using records::TunePhase;

namespace {

const char* name_of(TunePhase p) {
  switch (p) {
    case TunePhase::New: return "new";
    case TunePhase::Profiled: return "profiled";
    case TunePhase::Planned: return "planned";
    case TunePhase::Training: return "training";
    case TunePhase::Done: return "done";
  }
  return "?";
}

const char* name_of(PhaseEvent e) {
  switch (e) {
    case PhaseEvent::Profiled: return "profiled";
    case PhaseEvent::Planned: return "planned";
    case PhaseEvent::PlannedAfterPilot: return "planned after the pilot";
    case PhaseEvent::Training: return "training";
    case PhaseEvent::Succeeded: return "succeeded";
  }
  return "?";
}

struct Move {
  TunePhase from;
  PhaseEvent event;
  TunePhase to;
};

// Every move a job makes; anything else is a bug.
constexpr Move kMoves[] = {
    {TunePhase::New, PhaseEvent::Profiled, TunePhase::Profiled},
    {TunePhase::Profiled, PhaseEvent::Planned, TunePhase::Planned},
    {TunePhase::Profiled, PhaseEvent::PlannedAfterPilot, TunePhase::Training},
    {TunePhase::Planned, PhaseEvent::Training, TunePhase::Training},
    {TunePhase::Training, PhaseEvent::Training, TunePhase::Training},
    {TunePhase::Training, PhaseEvent::Succeeded, TunePhase::Done},
    {TunePhase::Done, PhaseEvent::Succeeded, TunePhase::Done},
};

}  // namespace

TunePhase next_phase(TunePhase phase, PhaseEvent event) {
  for (const auto& m : kMoves) {
    if (m.from == phase && m.event == event) return m.to;
  }
  throw std::logic_error(std::string("a tune job does not move on '") + name_of(event) + "' from phase " +
                         name_of(phase));
}

}  // namespace tula::tune
