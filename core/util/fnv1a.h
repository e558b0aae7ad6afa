// FNV-1a (64-bit): a cheap fingerprint that is the same on every machine and build (std::hash promises
// neither), for telling files or tokenizers apart by mistake. Not a defence against a crafted collision.
#pragma once
#include <cstdint>
#include <string_view>

namespace nf {

struct Fnv1a {
  uint64_t hash = 14695981039346656037ull;  // its offset basis
  void add(std::string_view bytes) {
    for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
};

}  // namespace nf
