#pragma once

#include <cstdint>

namespace tula::train {

// The step of its epoch at which a run resumes from a checkpoint taken after
// `stopped_at` steps of global batch `was_batch`, now at global batch
// `now_batch` with `steps_now` steps to an epoch. At the same batch it is the
// step it stopped at; at another batch, the step that has seen the same
// samples. A stop at an epoch's last step counts that step's partial batch
// whole, so the converted step can lie past the epoch: it is then the
// epoch's end (`steps_now`), where the epoch's evaluation and record follow,
// as they do at the same batch.
int64_t resumed_step_in_epoch(int64_t stopped_at, int64_t was_batch, int64_t now_batch, int64_t steps_now);

}  // namespace tula::train
