// A tiny deterministic random number generator shared by the sampler, the
// transform and the synthetic data set. std:: distributions differ between
// standard libraries and torch generators carry global state; this gives the
// same stream on every rank, machine and resumed run.
#pragma once
#include <cstdint>

namespace tula::data {

// One step of splitmix64 (Steele, Lea, Flood 2014): advances `state` and
// returns a well-mixed 64-bit value.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Derives an independent seed from (seed, value), e.g. the transform seed of
// batch i from the run's seed. Nearby inputs give unrelated outputs.
inline uint64_t mix(uint64_t seed, uint64_t value) {
  uint64_t state = seed;
  uint64_t hashed = splitmix64(state) ^ value;
  return splitmix64(hashed);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t next() { return splitmix64(state_); }

  // Uniform in [0, n), n > 0, without modulo bias (Lemire's method).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace tula::data
