#include "eval/benchmark_tasks.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/json_read.h"
#include "text/unicode.h"
#include "util/whole_number.h"

namespace nf {
namespace {

namespace fs = std::filesystem;

struct TaskInfo {
  BenchmarkTask task;
  const char* name;
  bool accNorm;
  std::vector<std::string> files;  // distributed names, relative to a folder holding them
};

const std::vector<TaskInfo>& tasks() {
  static const std::vector<TaskInfo> all = {
      {BenchmarkTask::HellaSwag, "hellaswag", true, {"hellaswag_val.jsonl", "hellaswag/hellaswag_val.jsonl"}},
      {BenchmarkTask::Piqa, "piqa", true, {"valid.jsonl", "piqa/valid.jsonl"}},
      {BenchmarkTask::WinoGrande,
       "winogrande",
       false,
       {"winogrande_1.1/dev.jsonl", "winogrande/dev.jsonl", "winogrande_dev.jsonl"}},
      {BenchmarkTask::BoolQ, "boolq", false, {"boolq/dev.jsonl", "BoolQ/val.jsonl", "boolq_dev.jsonl"}},
      {BenchmarkTask::ArcEasy,
       "arc_easy",
       true,
       {"ARC-Easy/ARC-Easy-Test.jsonl", "ARC-V1-Feb2018-2/ARC-Easy/ARC-Easy-Test.jsonl"}},
      {BenchmarkTask::ArcChallenge,
       "arc_challenge",
       true,
       {"ARC-Challenge/ARC-Challenge-Test.jsonl", "ARC-V1-Feb2018-2/ARC-Challenge/ARC-Challenge-Test.jsonl"}},
      {BenchmarkTask::Lambada, "lambada", false, {"lambada_test.jsonl", "lambada/lambada_test.jsonl"}},
  };
  return all;
}

const TaskInfo& infoOf(BenchmarkTask task) {
  for (const auto& t : tasks())
    if (t.task == task) return t;
  throw std::logic_error("benchmark task without its row in tasks()");
}

// The text without the characters pythonIsSpace accepts at its end, and at its start too with bothEnds,
// decoded as code points (a byte that is no UTF-8 is no space).
std::string stripSpaces(const std::string& s, bool bothEnds) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t begin = 0, end = 0;  // from the first character kept to the end of the last
  bool kept = false;
  for (std::size_t i = 0; i < s.size();) {
    char32_t c;
    const auto length = static_cast<std::size_t>(decodeUtf8(bytes + i, bytes + s.size(), c));
    if (c == kInvalidByte || !pythonIsSpace(c)) {
      if (!kept && bothEnds) begin = i;
      kept = true;
      end = i + length;
    }
    i += length;
  }
  return s.substr(begin, end - begin);
}

// Python's str.replace: every non-overlapping occurrence, left to right, in one pass.
std::string replaceAll(const std::string& s, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t found; (found = s.find(from, at)) != std::string::npos; at = found + from.size())
    out.append(s, at, found - at).append(to);
  return out.append(s, at, std::string::npos);
}

// Python's len() of a str: code points, counted as the UTF-8 bytes that start one.
std::size_t characters(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A label written as a number or as a string of digits ("2"), as the harness's datasets differ.
int64_t labelOf(const JsonIn& value) {
  if (value.isText()) {
    const std::optional<int64_t> label = wholeNumber(value.text());
    if (!label) value.fail("a label (a whole number)");
    return *label;
  }
  return value.whole<int64_t>();
}

// One JSONL file's items: `read` turns a line's JSON into an item; its errors get the file and line.
template <class Read>
std::vector<BenchmarkItem> readLines(const std::string& file, int64_t limit, Read read) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw FileError(file, "cannot be read");
  std::vector<BenchmarkItem> items;
  std::string text;
  for (int64_t line = 1; std::getline(in, text) && (limit <= 0 || static_cast<int64_t>(items.size()) < limit);
       ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (pythonStrip(text).empty()) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(text);
      BenchmarkItem item = read(JsonIn(j, "item"));
      if (item.gold < 0 || item.gold >= static_cast<int>(item.requests.size()))
        throw std::invalid_argument("the label " + std::to_string(item.gold) + " is not one of the " +
                                    std::to_string(item.requests.size()) + " choices");
      item.line = line;
      items.push_back(std::move(item));
    } catch (const nlohmann::json::exception& e) {
      throw FileError(file, "line " + std::to_string(line) + " is not JSON: " + e.what());
    } catch (const std::invalid_argument& e) {
      throw FileError(file, "line " + std::to_string(line) + ": " + e.what());
    }
  }
  if (in.bad()) throw FileError(file, "reading failed");
  if (items.empty()) throw FileError(file, "holds no items");
  return items;
}

// The usual multiple-choice item: one context, continuations " " + each choice.
BenchmarkItem choiceItem(const std::string& context, const std::vector<std::string>& choices, int64_t gold) {
  if (gold < 0 || gold >= static_cast<int64_t>(choices.size()))  // before it is narrowed to an int
    throw std::invalid_argument("the label " + std::to_string(gold) + " is not one of the " +
                                std::to_string(choices.size()) + " choices");
  BenchmarkItem item;
  for (const auto& choice : choices) {
    item.requests.push_back({context, " " + choice});
    item.choiceLengths.push_back(characters(choice));
  }
  item.gold = static_cast<int>(gold);
  return item;
}

std::vector<std::string> texts(const JsonIn& list) {
  return list.list([](const JsonIn& x) { return x.text(); });
}

BenchmarkItem hellaswagItem(const JsonIn& j) {
  const std::string context = j["ctx_a"].text() + " " + pythonCapitalize(j["ctx_b"].text());
  std::vector<std::string> endings = texts(j["endings"]);
  for (auto& ending : endings) ending = hellaswagPreprocess(ending);
  return choiceItem(hellaswagPreprocess(j["activity_label"].text() + ": " + context), endings,
                    labelOf(j["label"]));
}

BenchmarkItem piqaItem(const JsonIn& j, int64_t label) {
  return choiceItem("Question: " + j["goal"].text() + "\nAnswer:", {j["sol1"].text(), j["sol2"].text()},
                    label);
}

BenchmarkItem winograndeItem(const JsonIn& j) {
  const std::string sentence = j["sentence"].text();
  const std::size_t blank = sentence.find('_');
  if (blank == std::string::npos) j["sentence"].fail("a sentence with a blank \"_\"");
  const std::string answer = j["answer"].isText() ? j["answer"].text() : std::to_string(labelOf(j["answer"]));
  if (answer != "1" && answer != "2") j["answer"].fail("\"1\" or \"2\"");
  // Partial scoring: the sentence up to the blank with each option is the context, the rest is scored.
  BenchmarkItem item;
  const std::string rest = " " + pythonStrip(sentence.substr(blank + 1));
  for (const char* key : {"option1", "option2"}) {
    const std::string option = j[key].text();
    item.requests.push_back({sentence.substr(0, blank) + option, rest});
    item.choiceLengths.push_back(characters(option));
  }
  item.gold = answer == "1" ? 0 : 1;
  return item;
}

BenchmarkItem boolqItem(const JsonIn& j) {
  // BoolQ's own files say "answer": true; SuperGLUE's say "label": true, or 1 as Hugging Face converts it
  // (and -1 in its unlabelled test split: refused by readLines as a label that is not a choice, never scored
  // as "no").
  const JsonIn label = j["answer"].present() ? j["answer"] : j["label"];
  const int64_t gold = label.isFlag() ? (label.flag() ? 1 : 0) : labelOf(label);
  // The harness reads SuperGLUE's passages, which start with the page's title and " -- "; BoolQ's own files
  // keep the title apart.
  std::string passage = j["passage"].text();
  if (j["title"].present()) {
    const std::string title = j["title"].text() + " -- ";
    if (passage.rfind(title, 0) != 0) passage = title + passage;
  }
  return choiceItem(passage + "\nQuestion: " + j["question"].text() + "?\nAnswer:", {"no", "yes"}, gold);
}

// ARC as Hugging Face's ai2_arc has it ("question": text, "choices": {"text", "label"}) or as AI2
// distributes it ("question": {"stem", "choices": [{"text", "label"}]}).
BenchmarkItem arcItem(const JsonIn& j) {
  std::string question;
  std::vector<std::string> choices, labels;
  if (j["question"].isText()) {
    question = j["question"].text();
    choices = texts(j["choices"]["text"]);
    labels = texts(j["choices"]["label"]);
    j["choices"]["label"].requireSize(static_cast<int64_t>(choices.size()), "the number of choices");
  } else {
    question = j["question"]["stem"].text();
    for (const auto& choice : j["question"]["choices"].list([](const JsonIn& c) {
           return std::pair<std::string, std::string>(c["text"].text(), c["label"].text());
         })) {
      choices.push_back(choice.first);
      labels.push_back(choice.second);
    }
  }
  const std::string key = j["answerKey"].text();
  int64_t gold = -1;
  for (std::size_t i = 0; i < labels.size() && gold < 0; ++i)  // the first match, as the harness's index()
    if (labels[i] == key) gold = static_cast<int64_t>(i);
  if (gold < 0) j["answerKey"].fail("one of the choices' labels");
  return choiceItem("Question: " + question + "\nAnswer:", choices, gold);
}

// LAMBADA: the text's last word (after its last space) is the target, " " + word.
BenchmarkItem lambadaItem(const JsonIn& j) {
  const std::string text = j["text"].text();
  const std::size_t space = text.rfind(' ');
  BenchmarkItem item;
  if (space == std::string::npos)
    item.requests.push_back({"", " " + text});
  else
    item.requests.push_back({text.substr(0, space), text.substr(space)});
  item.choiceLengths.push_back(characters(item.requests[0].continuation) - 1);
  return item;
}

// PIQA's labels: one whole number per line of valid-labels.lst, beside valid.jsonl.
std::vector<int64_t> piqaLabels(const std::string& file) {
  const fs::path labels = fs::path(file).parent_path() / (fs::path(file).stem().string() + "-labels.lst");
  std::ifstream in(labels);
  if (!in) return {};
  std::vector<int64_t> out;
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    text = pythonStrip(text);
    if (text.empty()) continue;
    if (text != "0" && text != "1")
      throw FileError(labels.string(), "line " + std::to_string(line) + " is not 0 or 1");
    out.push_back(text == "1");
  }
  return out;
}

// The task's file in `folder` under the first of its distributed names that is there ("": none).
std::string fileIn(BenchmarkTask task, const std::string& folder) {
  for (const auto& name : infoOf(task).files)
    if (fs::is_regular_file(fs::path(folder) / name)) return (fs::path(folder) / name).string();
  return {};
}

std::string taskFile(BenchmarkTask task, const std::string& path) {
  if (!fs::is_directory(path)) {
    if (!fs::exists(path)) throw FileError(path, "does not exist");
    return path;
  }
  if (std::string file = fileIn(task, path); !file.empty()) return file;
  std::string tried;
  for (const auto& name : infoOf(task).files) tried += (tried.empty() ? "" : ", ") + name;
  throw FileError(path,
                  std::string("holds no ") + benchmarkTaskName(task) + " file (looked for " + tried + ")");
}

}  // namespace

const std::vector<BenchmarkTask>& allBenchmarkTasks() {
  static const std::vector<BenchmarkTask> all = [] {
    std::vector<BenchmarkTask> out;
    for (const auto& t : tasks()) out.push_back(t.task);
    return out;
  }();
  return all;
}

const char* benchmarkTaskName(BenchmarkTask task) { return infoOf(task).name; }
bool reportsAccNorm(BenchmarkTask task) { return infoOf(task).accNorm; }
std::vector<BenchmarkTask> benchmarkTasksIn(const std::string& folder) {
  std::vector<BenchmarkTask> found;
  for (const auto& t : tasks())
    if (!fileIn(t.task, folder).empty()) found.push_back(t.task);
  return found;
}

BenchmarkTask parseBenchmarkTask(const std::string& name) {
  std::string names;
  for (const auto& t : tasks()) {
    if (name == t.name) return t.task;
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  }
  throw std::invalid_argument("unknown benchmark '" + name + "' (known: " + names + ")");
}

bool pythonIsSpace(char32_t c) {
  // Every code point whose str.isspace() is true (CPython's _PyUnicode_IsWhitespace: bidirectional type
  // WS, B or S): [hex(c) for c in range(0x110000) if chr(c).isspace()]. Not U+180E or U+200B.
  static constexpr char32_t kSpaces[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x1C,   0x1D,   0x1E,
                                         0x1F,   0x20,   0x85,   0xA0,   0x1680, 0x2000, 0x2001, 0x2002,
                                         0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
                                         0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  return std::binary_search(std::begin(kSpaces), std::end(kSpaces), c);
}

std::string pythonStrip(const std::string& text) { return stripSpaces(text, true); }
std::string pythonRstrip(const std::string& text) { return stripSpaces(text, false); }

void requireOneTaskPerFile(const std::vector<BenchmarkTask>& tasks, const std::string& path) {
  std::vector<BenchmarkTask> distinct;
  for (BenchmarkTask task : tasks)
    if (std::find(distinct.begin(), distinct.end(), task) == distinct.end()) distinct.push_back(task);
  if (distinct.size() < 2 || !fs::exists(path) || fs::is_directory(path))
    return;  // missing: readBenchmark says so
  std::string names;
  for (BenchmarkTask task : distinct)
    names += (names.empty() ? "" : ", ") + std::string(benchmarkTaskName(task));
  throw std::invalid_argument(path + " is one file, which holds one task's items: for " + names +
                              " give a folder holding each task's file under its distributed name");
}

std::string pythonCapitalize(const std::string& text) {
  std::string out = text;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (i == 0 && c >= 'a' && c <= 'z') out[i] = static_cast<char>(c - 'a' + 'A');
    if (i > 0 && c >= 'A' && c <= 'Z') out[i] = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string hellaswagPreprocess(const std::string& text) {
  const std::string titled = replaceAll(pythonStrip(text), " [title]", ". ");
  // re.sub("\[.*?\]", "", …): from each "[", the nearest "]" on the same line.
  std::string unbracketed;
  for (std::size_t i = 0; i < titled.size(); ++i) {
    if (titled[i] == '[') {
      const std::size_t close = titled.find_first_of("]\n", i + 1);
      if (close != std::string::npos && titled[close] == ']') {
        i = close;
        continue;
      }
    }
    unbracketed += titled[i];
  }
  return replaceAll(unbracketed, "  ", " ");
}

BenchmarkData readBenchmark(BenchmarkTask task, const std::string& path, int64_t limit) {
  BenchmarkData data;
  data.task = task;
  data.file = taskFile(task, path);
  switch (task) {
    case BenchmarkTask::HellaSwag:
      data.items = readLines(data.file, limit, hellaswagItem);
      break;
    case BenchmarkTask::Piqa: {
      const std::vector<int64_t> labels = piqaLabels(data.file);
      int64_t index = 0;
      data.items = readLines(data.file, limit, [&](const JsonIn& j) {
        const int64_t i = index++;
        if (j["label"].present()) return piqaItem(j, labelOf(j["label"]));
        if (i >= static_cast<int64_t>(labels.size()))
          throw std::invalid_argument("no \"label\" and no line " + std::to_string(i + 1) +
                                      " in the labels file beside it (valid-labels.lst)");
        return piqaItem(j, labels[i]);
      });
      if (!labels.empty() && limit <= 0 && static_cast<int64_t>(labels.size()) != index)
        throw FileError(data.file, "has " + std::to_string(index) + " items but its labels file " +
                                       std::to_string(labels.size()) + " labels");
      break;
    }
    case BenchmarkTask::WinoGrande:
      data.items = readLines(data.file, limit, winograndeItem);
      break;
    case BenchmarkTask::BoolQ:
      data.items = readLines(data.file, limit, boolqItem);
      break;
    case BenchmarkTask::ArcEasy:
    case BenchmarkTask::ArcChallenge:
      data.items = readLines(data.file, limit, arcItem);
      break;
    case BenchmarkTask::Lambada:
      data.items = readLines(data.file, limit, lambadaItem);
      break;
  }
  return data;
}

}  // namespace nf
