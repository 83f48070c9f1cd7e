// The fused CPU loops against the same arithmetic written with tensor ops.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "kernels/momentum_update.hpp"
#include "kernels/squared_norm.hpp"

namespace tula::kernels {
namespace {

double reference_squared_norm(const torch::Tensor& t) {
  auto d = t.to(torch::kDouble).reshape({-1});
  return d.dot(d).item<double>();
}

TEST(SquaredNorm, MatchesDoubleReferenceAcrossSizes) {
  torch::manual_seed(3);
  for (int64_t n : {0, 1, 7, 16384, 16385, 65537, 1000003}) {
    auto t = torch::randn({n});
    EXPECT_NEAR(squared_norm(t), reference_squared_norm(t), 1e-5 * std::max(1.0, reference_squared_norm(t)))
        << "n = " << n;
  }
}

TEST(SquaredNorm, HandlesNonContiguousAndDoubleTensors) {
  auto t = torch::randn({300, 200}).t();  // a transposed view
  EXPECT_NEAR(squared_norm(t), reference_squared_norm(t), 1e-3);
  auto d = torch::randn({1000}, torch::kDouble);
  EXPECT_DOUBLE_EQ(squared_norm(d), reference_squared_norm(d));
}

TEST(SquaredNorm, ManyTensorsGiveOneNormEach) {
  std::vector<torch::Tensor> ts = {torch::full({3}, 2.0), torch::zeros({5}), torch::ones({2, 2})};
  auto norms = squared_norms(ts);
  ASSERT_EQ(norms.numel(), 3);
  EXPECT_FLOAT_EQ(norms[0].item<float>(), 12.0F);
  EXPECT_FLOAT_EQ(norms[1].item<float>(), 0.0F);
  EXPECT_FLOAT_EQ(norms[2].item<float>(), 4.0F);
}

// d = s*g + wd*w; buf = m*buf + (1-damp)*d; w -= lr*(nesterov ? d + m*buf : buf)
void reference_update(torch::Tensor& w, const torch::Tensor& g, torch::Tensor& buf, const MomentumUpdate& u) {
  auto d = g * u.grad_scale + w * u.weight_decay;
  buf = buf.defined() ? buf * u.momentum + d * (1 - u.dampening) : d.clone();
  w -= u.lr * (u.nesterov ? d + u.momentum * buf : buf);
}

TEST(MomentumUpdate, MatchesTensorOpsWithScaleDampeningAndNesterov) {
  torch::manual_seed(5);
  for (bool nesterov : {false, true}) {
    MomentumUpdate u;
    u.lr = 0.05;
    u.momentum = 0.9;
    u.dampening = nesterov ? 0.0 : 0.1;
    u.weight_decay = 1e-3;
    u.grad_scale = 1.7;
    u.nesterov = nesterov;
    auto w = torch::randn({100003});
    auto w_ref = w.clone();
    torch::Tensor buf, buf_ref;
    for (int step = 0; step < 4; ++step) {
      auto g = torch::randn({100003});
      momentum_update(w, g, buf, u);
      reference_update(w_ref, g, buf_ref, u);
      ASSERT_TRUE(torch::allclose(w, w_ref, 1e-5, 1e-6)) << "nesterov " << nesterov << " step " << step;
      ASSERT_TRUE(torch::allclose(buf, buf_ref, 1e-5, 1e-6));
    }
  }
}

TEST(MomentumUpdate, WithoutMomentumKeepsNoBuffer) {
  MomentumUpdate u;
  u.lr = 0.5;
  auto w = torch::ones({10});
  torch::Tensor buf;
  momentum_update(w, torch::full({10}, 2.0), buf, u);
  EXPECT_FALSE(buf.defined());
  EXPECT_TRUE(torch::allclose(w, torch::zeros({10})));
}

}  // namespace
}  // namespace tula::kernels
