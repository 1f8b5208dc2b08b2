// A small deterministic random source for the fuzzers. std:: distributions are
// implementation-defined, so a seed would not give the same program on every
// standard library; this one is fully specified (splitmix64 seeding, xoshiro256**).
#pragma once
#include <cstdint>
#include <vector>

namespace gpurc::fuzz {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      w = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    uint64_t r = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  // Uniform in [0, n); n > 0. The tiny modulo bias does not matter here.
  uint32_t below(uint32_t n) { return uint32_t(next() % n); }
  // Uniform in [lo, hi].
  int range(int lo, int hi) { return lo + int(below(uint32_t(hi - lo + 1))); }
  // True with probability pct / 100.
  bool chance(unsigned pct) { return below(100) < pct; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(uint32_t(v.size()))]; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace gpurc::fuzz
