// What the command files share on top of CLI11: range checks for number options, and the hooks that make a
// subcommand and give it its work. Include it only where options are declared (the *_commands.cpp files and
// main.cpp): CLI/CLI.hpp is slow to compile.
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace nf::cli {

// A subcommand of parent: summary is its line in parent's list of commands; description (set on the
// returned app) heads its own --help.
CLI::App& addCommand(CLI::App& parent, const std::string& name, const std::string& summary);

// What command does when it is the one chosen: work runs after the whole command line parsed, and its
// return value is the exit status.
void onRun(CLI::App& command, std::function<int()> work);

// An option that may be left out because its default lies elsewhere (a preset, the model's context): value
// is set only when it is given. value must outlive the parse.
template <typename T>
CLI::Option* addOptional(CLI::App& command, const std::string& name, std::optional<T>& value,
                         const std::string& help) {
  return command.add_option_function<T>(
      name, [&value](const T& given) { value = given; }, help);
}

namespace detail {

template <typename T>
std::string numberText(T value) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    char text[32];
    auto [end, error] = std::to_chars(text, text + sizeof text, value);
    return error == std::errc() ? std::string(text, end) : std::to_string(value);
  }
}

}  // namespace detail

// A number option's range check: the whole value is a base-10 number of type T within [min, max] (or
// (min, max] when minExclusive). A failure reads "--name: must be ≥ 1, got 0", CLI11 putting the option's
// name in front; help shows the range. Apply it with ->transform(), not ->check(): it also rewrites an
// integer in plain decimal, because CLI11 alone would read "010" as octal eight (a zero-padded step number
// would name the wrong checkpoint), and ->check() may not change the value.
template <typename T>
CLI::Validator inRange(T min, T max, bool minExclusive = false) {
  const bool unbounded = max == std::numeric_limits<T>::max() ||
                         (std::is_floating_point_v<T> && max == std::numeric_limits<T>::infinity());
  const std::string range = unbounded ? (minExclusive ? "> " : "≥ ") + detail::numberText(min)
                                      : (minExclusive ? "in (" : "in [") + detail::numberText(min) + ", " +
                                            detail::numberText(max) + "]";
  return CLI::Validator(
      [min, max, minExclusive, range](std::string& input) -> std::string {
        T value{};
        const char* end = input.data() + input.size();
        auto [stop, error] = std::from_chars(input.data(), end, value);
        if (input.empty() || error != std::errc() || stop != end)
          return std::string(std::is_integral_v<T> ? "expects an integer" : "expects a number") + ", got '" +
                 input + "'";
        // Written so that NaN fails as well.
        if (!((minExclusive ? value > min : value >= min) && value <= max))
          return "must be " + range + ", got " + input;
        if constexpr (std::is_integral_v<T>) input = std::to_string(value);  // what CLI11 then converts
        return "";
      },
      range);
}

template <typename T>
CLI::Validator atLeast(T min) {
  return inRange(min, std::numeric_limits<T>::max());
}

// A finite number strictly above min (a learning rate).
inline CLI::Validator above(double min) { return inRange(min, std::numeric_limits<double>::max(), true); }

// A comma-separated list option (--eval a.bin,b.bin) that may also be given again: each time adds to the
// list (the last one alone had counted, the others dropped unsaid).
inline CLI::Option* addingUp(CLI::Option* option) {
  return option->delimiter(',')->multi_option_policy(CLI::MultiOptionPolicy::Join);
}

// A share or probability, in [0, 1].
inline CLI::Validator fraction() { return inRange(0.0, 1.0); }

}  // namespace nf::cli
