// The communication trials, their ranks as threads of this process over
// loopback (real Gloo).
#include "profile/comm_trials.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "helpers/expect_error.hpp"

namespace tula::profile {
namespace {

CommTrialOptions two_ranks(const std::string& model) {
  CommTrialOptions o;
  o.workers = {2};
  o.spec.target.model = model;
  o.spec.target.channels = 1;
  o.spec.target.height = o.spec.target.width = 28;
  o.spec.message_bytes = {4096, 32768};
  o.spec.allreduce_warmup = 1;
  o.spec.allreduce_repeats = 3;
  o.spec.overlap_batches = {4};
  o.spec.overlap_warmup = 1;
  o.spec.overlap_steps = 2;
  o.spec.rendezvous_timeout_s = 60;
  o.spec.collective_timeout_s = 60;
  return o;
}

TEST(CommTrials, TwoRanksAsThreadsGiveEverySampleAndLeaveTheCallersThreadsAsTheyWere) {
  torch::set_num_threads(2);
  std::vector<std::string> lines;
  const auto r = run_comm_trials(two_ranks("lenet5"), [&](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(torch::get_num_threads(), 2) << "the ranks set their own share of the cores; the caller keeps its own";
  ASSERT_EQ(r.allreduce.size(), 2u);
  for (const auto& a : r.allreduce) {
    EXPECT_EQ(a.workers, 2);
    EXPECT_EQ(a.seconds.size(), 3u);
  }
  ASSERT_EQ(r.overlap.size(), 1u);
  EXPECT_EQ(r.overlap[0].batch_per_worker, 4);
  EXPECT_EQ(r.overlap[0].step_s.size(), 2u);
  ASSERT_EQ(r.contention.size(), 1u);
  EXPECT_EQ(r.contention[0].workers_per_node, 2);
  ASSERT_EQ(r.raw.size(), 1u);
  EXPECT_EQ(r.raw[0].at("threads").get<int64_t>(), std::max<int64_t>(1, std::thread::hardware_concurrency() / 2));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("2 workers on loopback"), std::string::npos) << lines.front();
}

TEST(CommTrials, ARankThatFailsIsNamedWithItsError) {
  tula::testing::expect_error([] { run_comm_trials(two_ranks("no_such_model"), nullptr); },
                              {"communication trial with 2 workers failed: rank 0", "no_such_model"});
}

}  // namespace
}  // namespace tula::profile
