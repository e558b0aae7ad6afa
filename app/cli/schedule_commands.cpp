// normfree-cli schedule: the presets listed or printed, and schedule files validated.
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "options.h"
#include "train/settings.h"

namespace nf::cli {

void cmdSchedule(CLI::App& command) {
  command.description(
      "Print a preset (its settings and schedule as JSON), list the presets, or validate a schedule file "
      "for a model depth and step count.");
  struct Options {
    std::string preset, validate;
    int layers = 12;
    int64_t steps = 300;
    bool list = false;
  };
  auto o = std::make_shared<Options>();
  CLI::Option* preset = command.add_option("--preset", o->preset, "print this preset")->type_name("name");
  CLI::Option* validate =
      command.add_option("--validate", o->validate, "validate this schedule file")->type_name("file.json");
  // Only --validate reads them: beside --preset or --list they had been ignored unsaid.
  command.add_option("--layers", o->layers, "model depth for --validate")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str()
      ->needs(validate);
  command.add_option("--steps", o->steps, "max steps for --validate")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1))
      ->capture_default_str()
      ->needs(validate);
  command.add_flag("--list", o->list, "list the presets")->excludes(preset)->excludes(validate);
  validate->excludes(preset);
  onRun(command, [o] {
    if (o->list || (o->preset.empty() && o->validate.empty())) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& p : presets())
        list.push_back({{"name", p.name},
                        {"layers", p.nLayer},
                        {"steps", p.optimizer.maxSteps},
                        {"description", p.description}});
      printJson(list);
      return 0;
    }
    if (!o->preset.empty()) {
      Preset p;
      try {
        p = findPreset(o->preset);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      RunConfig c;
      c.preset = p.name;
      c.optimizer = p.optimizer;
      c.removal = p.removal;
      c.schedule = p.schedule;
      nlohmann::json j = toJson(c);
      for (const char* key : {"model", "train_data", "eval_data", "device", "mode", "format", "version"})
        j.erase(key);
      j["layers"] = p.nLayer;
      j["description"] = p.description;
      printJson(j);
      return 0;
    }
    const std::string& file = o->validate;
    const Schedule s = readScheduleFile(file);
    try {
      s.validate(o->layers, o->steps);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(file + ": invalid schedule:\n" + e.what());
    }
    printJson({{"file", file}, {"valid", true}, {"events", s.events.size()}});
    return 0;
  });
}

}  // namespace nf::cli
