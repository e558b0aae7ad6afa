// The main style of the synthetic corpus, the training distribution: stories, facts, dialogues,
// descriptions, diaries, plans, and the repeated spans (drills, echoes, episodes) that teach induction.
// mainDocument() picks a genre and writes one document with the rules of corpus_rules.cpp.
#include <array>

#include "data/corpus_writer.h"

namespace nf::corpus {
namespace {

// The chance that a narrative sentence is an IOI frame; with the other genres, about 18% of the main
// corpus's sentences are.
constexpr double kStoryIoi = 0.27;

// A made-up word of one to three syllables ("tavo", "krinex", "belu"): the tokenizer cuts such words into
// many different pieces, so a repeated run of them can only be predicted by copying it.
std::string madeUpWord(Random& r) {
  static constexpr std::array kOnsets{"b", "d", "f", "g", "k",  "l",  "m",  "n",  "p",  "r",
                                      "s", "t", "v", "z", "br", "kl", "st", "tr", "sh", "ch"};
  static constexpr std::array kVowels{"a", "e", "i", "o", "u", "ai", "ou", "ee"};
  static constexpr std::array kCodas{"", "", "", "n", "r", "s", "k", "m", "x"};
  std::string word;
  for (int i = between(r, 1, 3); i > 0; --i)
    word += std::string(r.pick(kOnsets)) + r.pick(kVowels) + r.pick(kCodas);
  return word;
}

// A run of made-up words, codes and numbers ("tavo krinex KZ-41 belu 907").
std::string madeUpSequence(Random& r, int words) {
  std::string text;
  for (int i = 0; i < words; ++i) {
    if (i > 0) text += ' ';
    const uint64_t kind = r.below(10);
    if (kind < 7) {
      text += madeUpWord(r);
    } else if (kind < 9) {
      text += static_cast<char>('A' + r.below(26));
      text += static_cast<char>('A' + r.below(26));
      text += '-' + std::to_string(between(r, 1, 999));
    } else {
      text += std::to_string(between(r, 0, 9999));
    }
  }
  return text;
}

// A span repeated verbatim later in the document, so that copying from context pays (induction).
void repeatEpisode(Writer& w) {
  Expander& ex = w.ex;
  Random& r = w.r;
  switch (r.below(12)) {
    case 7:
    case 8:
    case 9:
    case 10:
    case 11: {  // made-up words read back: nothing but copying predicts them
      const std::string sequence = madeUpSequence(r, between(r, 5, 14)) + ".";
      ex.sentence("code_intro");
      ex.say(sequence);
      if (r.chance(0.5)) {
        Deck events(ex, "story_event");
        for (int i = between(r, 1, 2); i > 0; --i) w.narrate(events, 0.15);
      }
      Deck again(ex, "code_again");
      for (int times = between(r, 2, 3); times > 0; --times) {
        again.sentence();
        ex.say(sequence);
      }
      break;
    }
    case 0: {  // a shopping list read back
      std::vector<std::string> items;
      Deck item(ex, "list_item");
      const int n = between(r, 5, 10);
      for (int i = 0; i < n; ++i) items.push_back(item.make());
      const std::string list = listText(items) + ".";
      ex.sentence("list_intro");
      ex.say(list);
      Deck events(ex, "story_event");
      for (int i = between(r, 1, 3); i > 0; --i) w.narrate(events, 0.15);
      ex.sentence("list_recall");
      ex.say(list);
      break;
    }
    case 1: {  // a sequence of words, then "Again:"
      std::vector<std::string> words;
      const int n = between(r, 5, 12);
      for (int i = 0; i < n; ++i) words.push_back(ex.make("seq_word"));
      std::string sequence;
      for (const std::string& word : words) sequence += (sequence.empty() ? "" : " ") + word;
      ex.sentence("seq_intro");
      ex.say(sequence + ".");
      for (int times = between(r, 1, 2); times > 0; --times) {
        ex.sentence("seq_again");
        ex.say(sequence + ".");
      }
      break;
    }
    case 2: {  // who goes where, read back
      std::vector<Person> cast = w.people(between(r, 4, 7));
      std::vector<std::string> pairs;
      for (const Person& p : cast) pairs.push_back(p.name + " to the " + ex.make("place"));
      const std::string plan = listText(pairs) + ".";
      ex.sentence("pairs_intro");
      ex.say(plan);
      ex.sentence("pairs_recall");
      ex.say(plan);
      break;
    }
    case 3: {  // a chant sung twice or three times
      const std::string chant = "\"" + ex.make("chant") + ".\"";
      ex.sentence("chant_intro");
      ex.say(chant);
      for (int times = between(r, 1, 2); times > 0; --times) {
        ex.sentence("chant_again");
        ex.say(chant);
      }
      break;
    }
    case 4: {  // the memory game: each turn repeats the list so far and adds a thing
      std::vector<std::string> things;
      const int rounds = between(r, 3, 6);
      ex.vars[kPLACE] = ex.make("place");
      ex.sentence("memory_intro");
      for (int i = 0; i < rounds; ++i) {
        things.push_back("a " + ex.make("object"));
        ex.say(ex.vars[i % 2 == 0 ? kP : kQ] + " said, \"I went to the " + ex.vars[kPLACE] +
               " and I bought " + listText(things) + ".\"");
      }
      break;
    }
    case 5: {  // a message read twice
      const std::string message = "\"" + ex.make("message") + ".\"";
      ex.sentence("message_intro");
      ex.say(message);
      ex.sentence("message_again");
      ex.say(message);
      break;
    }
    default: {  // a number to remember
      std::string digits;
      const int n = between(r, 6, 10);
      for (int i = 0; i < n; ++i) digits += (i ? " " : "") + std::to_string(r.below(10));
      ex.sentence("digits_intro");
      ex.say(digits + ".");
      ex.sentence("digits_again");
      ex.say(digits + ".");
      break;
    }
  }
}

void mainStory(Writer& w) {
  Deck events(w.ex, "story_event");
  w.ex.sentence("story_open");
  const int paragraphs = between(w.r, 2, 5);
  for (int p = 0; p < paragraphs; ++p) {
    if (p > 0) w.ex.paragraph();
    for (int i = between(w.r, 3, 7); i > 0; --i) w.narrate(events, kStoryIoi);
    if (w.r.chance(0.1)) repeatEpisode(w);
  }
  w.ex.sentence("story_close");
}

void mainFacts(Writer& w) {
  Expander& ex = w.ex;
  if (w.r.chance(0.55)) {  // one person
    Deck facts(ex, "bio_sentence");
    ex.sentence("bio_open");
    const int paragraphs = between(w.r, 2, 3);
    for (int p = 0; p < paragraphs; ++p) {
      if (p > 0) ex.paragraph();
      for (int i = between(w.r, 4, 7); i > 0; --i) w.narrate(facts, 0.15);
    }
    return;
  }
  // Several people, then a summary that names each one's city again.
  std::vector<Person> cast = w.people(between(w.r, 3, 5));
  std::vector<std::string> summary;
  for (size_t i = 0; i < cast.size(); ++i) {
    if (i > 0) ex.paragraph();
    w.bind(kP, cast[i]);
    w.bind(kQ, cast[(i + 1) % cast.size()]);
    ex.vars[kCITY] = ex.make("city");
    Deck facts(ex, "bio_sentence");
    ex.sentence("bio_open");
    for (int k = between(w.r, 3, 5); k > 0; --k) w.narrate(facts, 0.15);
    summary.push_back(cast[i].name + " lives in " + ex.vars[kCITY]);
  }
  ex.paragraph();
  ex.sentence("summary_intro");
  ex.say(listText(summary) + ".");
}

void mainDialogue(Writer& w) {
  Expander& ex = w.ex;
  Deck narration(ex, "dialogue_narration");
  Deck questions(ex, "question");
  Deck answers(ex, "statement");
  ex.sentence("dialogue_open");
  const int turns = between(w.r, 5, 14);
  for (int t = 0; t < turns; ++t) {
    ex.paragraph();
    // Questions and answers come from decks (no line twice); the tags from the wrapper rules.
    ex.vars[kLINE] = t % 2 == 0 ? questions.make() : answers.make();
    ex.expand(t % 2 == 0 ? "dialogue_question" : "dialogue_answer");
    if (w.r.chance(0.3)) w.narrate(narration, 0.4);
    w.swapPQ();  // the listener speaks next
  }
  if (w.r.chance(0.5)) {
    ex.paragraph();
    Deck events(ex, "story_event");
    for (int i = between(w.r, 2, 5); i > 0; --i) w.narrate(events, kStoryIoi);
  }
}

void mainDescription(Writer& w) {
  Expander& ex = w.ex;
  static const char* const kinds[][2] = {
      {"desc_place", "place"}, {"desc_animal", "animal"}, {"desc_home", "room"}};
  const auto& kind = kinds[w.r.below(3)];
  ex.vars[kT] = ex.make(kind[1]);  // what is described; the templates say "{T}"
  Deck facts(ex, kind[0]);
  const int paragraphs = between(w.r, 1, 2);
  for (int p = 0; p < paragraphs; ++p) {
    if (p > 0) ex.paragraph();
    for (int i = between(w.r, 3, 5); i > 0; --i) w.narrate(facts, 0.08);
  }
  ex.paragraph();  // then a short scene
  Deck events(ex, "story_event");
  for (int i = between(w.r, 3, 6); i > 0; --i) w.narrate(events, kStoryIoi);
}

void mainDiary(Writer& w) {
  Expander& ex = w.ex;
  Deck entries(ex, "diary_sentence");
  const int days = between(w.r, 2, 4);
  const int day = static_cast<int>(w.r.below(20)) + 1;
  const std::string month = ex.make("month");
  for (int d = 0; d < days; ++d) {
    if (d > 0) ex.paragraph();
    ex.say(month + " " + std::to_string(day + d) + ".\n");
    if (d == 0) ex.text += "Dear diary,\n";
    for (int i = between(w.r, 3, 6); i > 0; --i) w.narrate(entries, 0.12);
  }
}

void mainPlans(Writer& w) {
  Expander& ex = w.ex;
  ex.sentence("plan_open");
  ex.paragraph();
  const int first = static_cast<int>(w.r.below(3));
  const int count = between(w.r, 3, 5);
  std::string plan;
  for (int d = first; d < first + count; ++d) {
    const std::string line = std::string("On ") + kWeekdays[d] + ", " + ex.make("plan_day") + ".";
    plan += (plan.empty() ? "" : " ") + line;
  }
  ex.say(plan);
  ex.paragraph();
  Deck more(ex, "plan_sentence");
  for (int i = between(w.r, 2, 4); i > 0; --i) w.narrate(more, 0.15);
  if (w.r.chance(0.25)) {  // the plan read back verbatim
    ex.sentence("plan_recall");
    ex.say(plan);
  }
}

// Drills: short runs of made-up words (or of ordinary words in random order), each read back at once, once
// or twice. Half of such a document can only be predicted by copying from a few tokens back: the pressure
// that lets a small model form induction heads within a budget of minutes.
void mainDrills(Writer& w) {
  Expander& ex = w.ex;
  Random& r = w.r;
  ex.sentence("drill_open");
  Deck intro(ex, "code_intro"), again(ex, "code_again");
  for (int i = between(r, 4, 8); i > 0; --i) {
    std::string sequence;
    if (r.chance(0.7)) {
      sequence = madeUpSequence(r, between(r, 3, 12));
    } else {
      for (int n = between(r, 3, 10); n > 0; --n)
        sequence += (sequence.empty() ? "" : " ") + ex.make("seq_word");
    }
    intro.sentence();
    ex.say(sequence + ".");
    for (int times = between(r, 1, 2); times > 0; --times) {
      again.sentence();
      ex.say(sequence + ".");
    }
    if (r.chance(0.3)) ex.paragraph();
  }
}

// Echoes: runs of words in random order (ordinary, made-up, codes), each repeated verbatim right away or
// after a sentence, with no cue announcing the repeat. Only an induction circuit (find the earlier
// occurrence of the current token, copy what followed it) predicts the second copy; drills and episodes
// alone taught the tiny model to copy after "Once more:" but not a bare repeat of random tokens.
void mainEchoes(Writer& w) {
  Expander& ex = w.ex;
  Random& r = w.r;
  Deck events(ex, "story_event");
  for (int i = between(r, 3, 6); i > 0; --i) {
    std::string span;
    for (int n = between(r, 6, 24); n > 0; --n) {
      if (!span.empty()) span += ' ';
      span += r.chance(0.5) ? ex.make("seq_word") : madeUpSequence(r, 1);
    }
    ex.say(span);
    for (int times = between(r, 1, 2); times > 0; --times) {
      if (r.chance(0.3)) w.narrate(events, 0.15);
      if (r.chance(0.5)) ex.text += '\n';
      ex.say(span);
    }
    ex.paragraph();
  }
}

void mainRepeats(Writer& w) {
  Deck events(w.ex, "story_event");
  w.ex.sentence("story_open");
  for (int i = between(w.r, 2, 4); i > 0; --i) w.narrate(events, kStoryIoi);
  for (int episodes = between(w.r, 2, 3); episodes > 0; --episodes) {
    w.ex.paragraph();
    repeatEpisode(w);
  }
  w.ex.paragraph();
  for (int i = between(w.r, 2, 5); i > 0; --i) w.narrate(events, kStoryIoi);
}

// Short scenes, each with two people and an IOI sentence.
void mainAnecdotes(Writer& w) {
  const int scenes = between(w.r, 3, 6);
  for (int s = 0; s < scenes; ++s) {
    if (s > 0) w.ex.paragraph();
    w.newCast();
    Deck events(w.ex, "story_event");
    events.sentence();
    w.ioi(true);
    if (w.r.chance(0.5)) events.sentence();
  }
}

}  // namespace

std::string mainDocument(Random& random) {
  Writer w(mainGrammar(), random, true);
  w.newCast();
  w.ex.vars[kCITY] = w.ex.make("city");
  const uint64_t roll = random.below(100);
  if (roll < 17)
    mainStory(w);
  else if (roll < 23)
    mainFacts(w);
  else if (roll < 29)
    mainDialogue(w);
  else if (roll < 33)
    mainDescription(w);
  else if (roll < 37)
    mainDiary(w);
  else if (roll < 41)
    mainPlans(w);
  else if (roll < 55)
    mainRepeats(w);
  else if (roll < 72)
    mainDrills(w);
  else if (roll < 91)
    mainEchoes(w);
  else
    mainAnecdotes(w);
  return polish(w.ex.text);
}

}  // namespace nf::corpus
