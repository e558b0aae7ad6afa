// normfree-cli schedule: the presets listed or printed, and schedule files validated.
#include <iostream>
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
    bool list = false, pos0 = false, eot = false;
  };
  auto o = std::make_shared<Options>();
  CLI::Option* preset = command.add_option("--preset", o->preset, "print this preset")->type_name("name");
  CLI::Option* validate =
      command.add_option("--validate", o->validate, "validate this schedule file")->type_name("file.json");
  // Only --validate and --preset read them: beside --list they had been ignored unsaid.
  CLI::Option* layers =
      command
          .add_option("--layers", o->layers,
                      "model depth for --validate, and for --preset by-depth (the schedule and steps a model "
                      "of that depth gets)")
          ->type_name("n")
          ->transform(atLeast(1))
          ->capture_default_str();
  CLI::Option* steps = command.add_option("--steps", o->steps, "max steps for --validate")
                           ->type_name("n")
                           ->transform(atLeast<int64_t>(1))
                           ->capture_default_str()
                           ->needs(validate);
  CLI::Option* pos0 = command
                          .add_flag("--pos0-treatment", o->pos0,
                                    "for --validate: the run uses the position-0 treatment (default: the "
                                    "treatments the schedule switches off somewhere)")
                          ->needs(validate);
  CLI::Option* eot =
      command.add_flag("--eot-treatment", o->eot, "for --validate: the run uses the end-of-text treatment")
          ->needs(validate);
  command.add_flag("--list", o->list, "list the presets")
      ->excludes(preset)
      ->excludes(validate)
      ->excludes(layers);
  validate->excludes(preset);
  onRun(command, [o, layers, steps, pos0, eot] {
    if (layers->count() > 0 && o->preset.empty() && o->validate.empty())
      throw UsageError("--layers is for --preset by-depth or --validate");
    if (o->list || (o->preset.empty() && o->validate.empty())) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& p : presets())
        list.push_back({{"name", p.name},
                        {"layers", p.nLayer},  // 0: any (by-depth's steps follow the depth: null)
                        {"steps", p.nLayer == 0 ? nlohmann::json() : nlohmann::json(p.optimizer.maxSteps)},
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
      // by-depth's schedule and steps are a depth's (the one a run of that model gets); another preset's
      // are its own depth's, which --layers may only repeat.
      if (p.nLayer != 0 && layers->count() > 0 && o->layers != p.nLayer)
        throw UsageError("the preset " + p.name + " is made for " + std::to_string(p.nLayer) +
                         " layers, not " + std::to_string(o->layers) + " (--layers)");
      const int depth = p.nLayer != 0 ? p.nLayer : o->layers;
      RunConfig c;
      c.preset = p.name;
      c.optimizer = p.optimizer;
      if (p.nLayer == 0) c.optimizer.maxSteps = stepsForDepth(depth);
      c.removal = p.removal;
      c.schedule = presetSchedule(p, depth);
      nlohmann::json j = toJson(c);
      for (const char* key : {"model", "train_data", "eval_data", "device", "mode", "format", "version"})
        j.erase(key);
      j["layers"] = depth;
      j["description"] = p.description;
      printJson(j);
      return 0;
    }
    const std::string& file = o->validate;
    const Schedule s = readScheduleFile(file);
    // A shallower model's schedule, checked against GPT-2 Small's depth, reads as leaving sites undone.
    if (layers->count() == 0 || steps->count() == 0)
      std::cerr << "note: validated for " << o->layers << " layers and " << o->steps
                << " steps (the defaults: GPT-2 Small's preset); --layers and --steps give the model's own\n";
    Treatments used{o->pos0, o->eot};
    if (pos0->count() + eot->count() == 0)
      for (const ScheduleEvent& e : s.events) {
        used.pos0 = used.pos0 || e.action == EventAction::EndPos0Treatment;
        used.eot = used.eot || e.action == EventAction::EndEotTreatment;
      }
    try {
      s.validate(o->layers, o->steps, used);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(file + ": invalid schedule:\n" + e.what());
    }
    // Valid is not complete: a schedule may leave sites or treatments for a later run, which export refuses.
    const Schedule::LeftUndone left = s.leftUndone(o->layers, used);
    auto names = [](const std::vector<SiteId>& sites) {
      nlohmann::json list = nlohmann::json::array();
      for (const SiteId& site : sites) list.push_back(siteName(site));
      return list;
    };
    printJson({{"file", file},
               {"valid", true},
               {"layers", o->layers},
               {"steps", o->steps},
               {"events", s.events.size()},
               {"treatments", {{"pos0", used.pos0}, {"eot", used.eot}}},
               {"layernorm_free_at_end", left.empty()},
               {"never_fake", names(left.keptReal)},
               {"pos0_treatment_left_on", names(left.pos0On)},
               {"eot_treatment_left_on", names(left.eotOn)}});
    return 0;
  });
}

}  // namespace nf::cli
