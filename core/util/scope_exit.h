// Runs a function when the scope ends, however it ends (return or exception): the one scope guard, for
// cleanups that are not an object's own destructor. Usage: const ScopeExit restore([&] { ... });
#pragma once
#include <utility>

namespace nf {

template <class Fn>
class ScopeExit {
 public:
  explicit ScopeExit(Fn fn) : m_fn(std::move(fn)) {}
  ~ScopeExit() { m_fn(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  Fn m_fn;
};

}  // namespace nf
