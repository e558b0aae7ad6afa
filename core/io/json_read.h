// Reading JSON that another machine wrote (a server's answer) back into our structs: every value is
// type-checked, and a missing or mistyped one is named by its path in a std::invalid_argument —
// "analysis result: 'residual_norms[3].position0.mean' is missing or not a number" — where nlohmann::json
// would throw its own exception naming neither. Header-only; for .cpp files (plain headers forward-declare
// JsonIn).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nf {

// One value of the JSON being read and the path that names it. A missing member is a JsonIn without a
// value: reading it throws, so `j["a"]["b"].real()` names the first of a, a.b that is missing.
class JsonIn {
 public:
  // The whole JSON; `what` starts every message ("analysis result").
  JsonIn(const nlohmann::json& j, const char* what) : m_json(&j), m_what(what) {}

  JsonIn operator[](const std::string& key) const {
    if (!m_json || !m_json->is_object()) fail("an object");
    const auto it = m_json->find(key);
    return {it != m_json->end() ? &*it : nullptr, m_what, m_path.empty() ? key : m_path + "." + key};
  }

  // This list's elements, each read by `read(const JsonIn&)`.
  template <class Read>
  auto list(Read read) const {
    if (!m_json || !m_json->is_array()) fail("a list");
    std::vector<decltype(read(*this))> out;
    out.reserve(m_json->size());
    for (std::size_t i = 0; i < m_json->size(); ++i)
      out.push_back(read(JsonIn(&(*m_json)[i], m_what, m_path + "[" + std::to_string(i) + "]")));
    return out;
  }

  // Throws unless this object's every member is one of `known`, naming the first other one: a misspelt
  // optional member ("learning_rate", "Action") would otherwise read as left out, its default silently used.
  void requireKnown(std::initializer_list<const char*> known) const {
    if (!m_json || !m_json->is_object()) fail("an object");
    for (const auto& member : m_json->items()) {
      const std::string& key = member.key();
      if (std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) continue;
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      throw std::invalid_argument(std::string(m_what) + ": " + (m_path.empty() ? "" : name() + ": ") +
                                  "unknown field \"" + key + "\" (known: " + list + ")");
    }
  }

  // Whether the value is there (and not null), for optional members.
  bool present() const { return m_json && !m_json->is_null(); }
  // Whether it is there as null (a value a writer could not give, or Python's None).
  bool null() const { return m_json && m_json->is_null(); }
  bool isText() const { return m_json && m_json->is_string(); }
  bool isFlag() const { return m_json && m_json->is_boolean(); }

  bool flag() const {
    if (!m_json || !m_json->is_boolean()) fail("true or false");
    return m_json->get<bool>();
  }

  std::string text() const {
    if (!m_json || !m_json->is_string()) fail("a string");
    return m_json->get<std::string>();
  }

  // null reads as NaN: nlohmann::json writes NaN and ±infinity (an NMAE over a zero effect) as null.
  double real() const {
    if (m_json && m_json->is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!m_json || !m_json->is_number()) fail("a number");
    return m_json->get<double>();
  }

  // A whole number that fits T (a signed type): never a fraction or a bool, never wrapped around. Parsed
  // text holds non-negative whole numbers as unsigned.
  template <class T>
  T whole() const {
    static_assert(std::numeric_limits<T>::is_signed, "whole<T>() reads signed types");
    using limits = std::numeric_limits<T>;
    const bool fits =
        m_json && m_json->is_number_integer() &&
        (m_json->is_number_unsigned() ? m_json->get<uint64_t>() <= static_cast<uint64_t>(limits::max())
                                      : m_json->get<int64_t>() >= static_cast<int64_t>(limits::min()) &&
                                            m_json->get<int64_t>() <= static_cast<int64_t>(limits::max()));
    if (!fits) fail("a whole number in range");
    return static_cast<T>(m_json->get<int64_t>());
  }

  uint64_t unsignedWhole() const {
    if (!m_json || !m_json->is_number_unsigned()) fail("a non-negative whole number");
    return m_json->get<uint64_t>();
  }

  // Reads into `target`, by its type, when the value is present; leaves the default there otherwise.
  template <class T>
  void readIfPresent(T& target) const {
    if (!present()) return;
    if constexpr (std::is_same_v<T, bool>)
      target = flag();
    else if constexpr (std::is_same_v<T, std::string>)
      target = text();
    else if constexpr (std::is_same_v<T, uint64_t>)
      target = unsignedWhole();
    else if constexpr (std::is_integral_v<T>)
      target = whole<T>();
    else
      target = real();
  }

  // As readIfPresent, but a null is refused: for a file a person may edit, where "clip_norm": null (Python's
  // None, "no clipping") would otherwise train with the default unsaid.
  template <class T>
  void readIfGiven(T& target) const {
    if (null())
      throw std::invalid_argument(std::string(m_what) + ": " + name() +
                                  " is null: give a value, or leave it out for the default");
    readIfPresent(target);
  }

  std::vector<double> reals() const {
    return list([](const JsonIn& x) { return x.real(); });
  }
  template <class T>
  std::vector<T> wholes() const {
    return list([](const JsonIn& x) { return x.template whole<T>(); });
  }
  // Exactly N numbers, as a std::array or a pair is written.
  template <std::size_t N>
  std::array<double, N> realArray() const {
    const std::vector<double> values = reals();
    requireSize(N);
    std::array<double, N> out;
    for (std::size_t i = 0; i < N; ++i) out[i] = values[i];
    return out;
  }

  // For a list that was read: throws unless it holds `expected` elements (`as` says what that count is,
  // "layers × heads"), for a layout that the users of what is read index by.
  void requireSize(int64_t expected, const std::string& as = "") const {
    const int64_t size = m_json && m_json->is_array() ? static_cast<int64_t>(m_json->size()) : -1;
    if (size != expected)
      throw std::invalid_argument(std::string(m_what) + ": " + name() + " has length " +
                                  std::to_string(size) + ", not " + (as.empty() ? "" : as + " = ") +
                                  std::to_string(expected));
  }

  [[noreturn]] void fail(const std::string& expected) const {
    std::string got;  // what was there instead, shortened
    if (m_json) got = m_json->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (got.size() > 40) got = got.substr(0, 37) + "...";
    throw std::invalid_argument(std::string(m_what) + ": " + name() +
                                (m_path.empty() ? " is not " : " is missing or not ") + expected +
                                (got.empty() ? "" : " (got " + got + ")"));
  }

 private:
  JsonIn(const nlohmann::json* j, const char* what, std::string path)
      : m_json(j), m_what(what), m_path(std::move(path)) {}
  std::string name() const { return m_path.empty() ? "the JSON" : "'" + m_path + "'"; }

  const nlohmann::json* m_json;  // null: missing
  const char* m_what;
  std::string m_path;
};

// read(JsonIn(j, what)), with any nlohmann::json exception the checks above missed rethrown as
// std::invalid_argument too.
template <class Read>
auto readJson(const nlohmann::json& j, const char* what, Read read) {
  try {
    return read(JsonIn(j, what));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string(what) + ": " + e.what());
  }
}

}  // namespace nf
