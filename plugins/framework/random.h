#pragma once
// Injected randomness: score ties and preemption's dry-run offset draw from a
// RandomSource so that tests can fix the outcome.
//
// Thread-safety: an instance is used by one thread at a time.

#include <cstdint>
#include <random>

namespace copse::plugins {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // Uniform in [0, n); n > 0.
  virtual uint64_t Uniform(uint64_t n) noexcept = 0;
};

class Mt19937Random final : public RandomSource {
 public:
  explicit Mt19937Random(uint64_t seed) : engine_(seed) {}
  uint64_t Uniform(uint64_t n) noexcept override {
    return n <= 1 ? 0 : std::uniform_int_distribution<uint64_t>(0, n - 1)(engine_);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace copse::plugins
