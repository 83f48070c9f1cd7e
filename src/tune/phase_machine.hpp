// The phases of a tune job (records::TunePhase, kept in tune.json) and the
// moves between them, written once:
//
//   New --profiled--> Profiled --planned--> Planned --training--> Training --succeeded--> Done
//                         |                                        ^
//                         +--------------planned_after_pilot-------+
//
// A job with a pilot stays Profiled while the pilot's workers run and moves
// to Training when its plan is made (the workers going on, or moved). A job
// resumed in Training trains on (training is a move to itself). A finished
// job whose report was not written yet succeeds again from Done. No LibTorch.
#pragma once
#include "records/states.hpp"

namespace tula::tune {

enum class PhaseEvent {
  Profiled,           // the profile is written
  Planned,            // a configuration is chosen before training (the plan, or --start-at)
  PlannedAfterPilot,  // the plan made from the pilot's steps
  Training,           // the training's launches begin (or go on after a resume)
  Succeeded,          // the job reached its goal
};

// The phase after `event` in `phase`; a move the job never makes throws
// std::logic_error naming both (a bug, not a user's error).
records::TunePhase next_phase(records::TunePhase phase, PhaseEvent event);

}  // namespace tula::tune
