// A small, portable random generator whose whole state is four integers, so it can be written into a
// checkpoint and restored exactly. std::mt19937 + std::uniform_int_distribution would give different
// numbers on different standard libraries; this gives the same numbers everywhere. And, for what no one may
// guess or repeat (a served run's token, a checkpoint's id), bytes from the kernel.
#pragma once
#include <array>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nf {

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Random {
 public:
  using State = std::array<uint64_t, 4>;

  explicit Random(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    for (auto& word : m_state) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(m_state[1] * 5, 7) * 9;
    const uint64_t t = m_state[1] << 17;
    m_state[2] ^= m_state[0];
    m_state[3] ^= m_state[1];
    m_state[1] ^= m_state[2];
    m_state[0] ^= m_state[3];
    m_state[2] ^= t;
    m_state[3] = rotl(m_state[3], 45);
    return result;
  }

  // Uniform in [0, n) without modulo bias (Lemire's method). n must be > 0.
  uint64_t below(uint64_t n) {
    for (;;) {
      const unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
      const uint64_t low = static_cast<uint64_t>(m);
      if (low >= n || low >= (0 - n) % n) return static_cast<uint64_t>(m >> 64);
    }
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // True with probability p.
  bool chance(double p) { return uniform() < p; }

  template <typename Container>
  const auto& pick(const Container& items) {
    return items[below(items.size())];
  }

  const State& state() const { return m_state; }
  void setState(const State& state) { m_state = state; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  State m_state{};
};

// `bytes` random bytes from the kernel (/dev/urandom), in hex; `what` names their use in the error.
inline std::string kernelRandomHex(std::size_t bytes, const std::string& what) {
  std::vector<unsigned char> random(bytes);
  std::ifstream device("/dev/urandom", std::ios::binary);
  if (!device.read(reinterpret_cast<char*>(random.data()), static_cast<std::streamsize>(bytes)))
    throw std::runtime_error("cannot read /dev/urandom for " + what);
  static const char* const hex = "0123456789abcdef";
  std::string text;
  for (unsigned char b : random) text += hex[b >> 4], text += hex[b & 15];
  return text;
}

}  // namespace nf
