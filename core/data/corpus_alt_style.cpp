// The alternative style of the synthetic corpus, the differently distributed eval set: recipes,
// forecasts, letters, instructions, sports, stock lists, FAQs, notices, reviews and timetables (British
// spelling). altDocument() picks a genre and writes one document with the rules of corpus_rules.cpp.
#include <algorithm>

#include "data/corpus_writer.h"

namespace nf::corpus {
namespace {

void altRecipe(Writer& w) {
  Expander& ex = w.ex;
  ex.sentence("recipe_title");
  ex.paragraph();
  ex.sentence("recipe_intro");
  ex.sentence("recipe_serves");
  ex.paragraph();
  ex.text += "Ingredients:";
  Deck ingredients(ex, "ingredient_line");
  for (int i = between(w.r, 4, 9); i > 0; --i) {
    ex.text += "\n- ";
    ingredients.next();
  }
  ex.paragraph();
  ex.text += "Method:";
  int step = 0;
  for (const char* phase : {"recipe_prep", "recipe_cook", "recipe_finish"}) {
    Deck steps(ex, phase);
    for (int i = between(w.r, 1, 3); i > 0; --i) {
      ex.text += "\n" + std::to_string(++step) + ". ";
      steps.next();
    }
  }
  if (w.r.chance(0.6)) {
    ex.paragraph();
    ex.sentence("recipe_note");
  }
}

void altWeather(Writer& w) {
  Expander& ex = w.ex;
  ex.vars[kCITY] = ex.make("alt_city");
  const int first = static_cast<int>(w.r.below(7));
  const int days = between(w.r, 3, 6);
  ex.sentence("wx_title");
  Deck conditions(ex, "wx_condition");
  for (int d = 0; d < days; ++d) {
    ex.paragraph();
    const int low = static_cast<int>(w.r.below(14));
    const int high = low + between(w.r, 3, 12);
    ex.text += std::string(kWeekdays[(first + d) % 7]) + ": ^";
    conditions.next();
    ex.text += ".";
    ex.say("Highs of " + std::to_string(high) + "°C, lows of " + std::to_string(low) + "°C.");
    Deck extra(ex, "wx_sentence");
    for (int i = between(w.r, 1, 3); i > 0; --i) extra.sentence();
  }
  if (w.r.chance(0.5)) {
    ex.paragraph();
    ex.sentence("wx_outlook");
  }
}

void altLetter(Writer& w) {
  Expander& ex = w.ex;
  const std::vector<Person> two = w.people(2);
  const bool formal = w.r.chance(0.5);
  ex.vars[kP] = two[0].name;
  ex.vars[kQ] = two[1].name;
  ex.vars[kSURNAME] = ex.make("surname");
  if (formal) {
    ex.sentence("letter_address");
    ex.paragraph();
    ex.text += two[1].female ? "Dear Ms " : "Dear Mr ";
    ex.expand("surname");
    ex.text += ",";
  } else {
    ex.sentence("letter_greeting");
  }
  // A formal letter has one purpose; a letter to a friend may have several. A purpose's paragraph opens
  // with one of its opening sentences.
  static const char* const informal[] = {"letter_news", "letter_invite", "letter_thanks"};
  static const char* const formalPurposes[] = {"letter_complaint", "letter_enquiry"};
  const std::string formalPurpose = formalPurposes[w.r.below(2)];
  const int paragraphs = between(w.r, 2, 3);
  const int first = static_cast<int>(w.r.below(3));
  for (int p = 0; p < paragraphs; ++p) {
    const std::string purpose = formal ? formalPurpose : informal[(first + p) % 3];
    ex.paragraph();
    if (!formal || p == 0) ex.sentence(purpose + "_open");
    Deck body(ex, purpose);
    for (int i = between(w.r, 2, 4); i > 0; --i) body.sentence();
  }
  ex.paragraph();
  ex.sentence("letter_close");
  ex.paragraph();
  ex.expand(formal ? "signoff_formal" : "signoff_informal");
  ex.text += ",\n" + two[0].name;
  if (formal) ex.text += " " + ex.vars[kSURNAME];
}

void altHowTo(Writer& w) {
  Expander& ex = w.ex;
  ex.say("How to ");
  ex.expand("howto_task");
  ex.paragraph();
  ex.sentence("howto_intro");
  ex.paragraph();
  Deck tools(ex, "tool");
  std::vector<std::string> needed;
  for (int i = between(w.r, 2, 5); i > 0; --i) needed.push_back("a " + tools.make());
  ex.text += "You will need: " + listText(needed) + ".";
  ex.paragraph();
  int step = 0;
  for (const char* phase : {"howto_prepare", "howto_work", "howto_finish"}) {
    Deck steps(ex, phase);
    for (int i = between(w.r, 1, 3); i > 0; --i) {
      if (step > 0) ex.text += "\n";
      ex.text += "Step " + std::to_string(++step) + ": ";
      steps.next();
    }
  }
  if (w.r.chance(0.7)) {
    ex.paragraph();
    ex.sentence("howto_tip");
  }
}

struct Standing {
  std::string team;
  int won = 0, drawn = 0, lost = 0;
  int points() const { return 3 * won + drawn; }
};

void altSports(Writer& w) {
  Expander& ex = w.ex;
  std::vector<std::string> teams;
  while (teams.size() < 6) {
    const std::string team = ex.make("team");
    if (std::find(teams.begin(), teams.end(), team) == teams.end()) teams.push_back(team);
  }
  std::vector<int> goals;  // home and away goals of the matches teams[0]-teams[1], teams[2]-teams[3], ...
  for (size_t i = 0; i < teams.size(); ++i) goals.push_back(static_cast<int>(w.r.below(i % 2 == 0 ? 5 : 4)));
  if (w.r.chance(0.5)) {  // a results round-up and a league table
    ex.sentence("results_title");
    for (size_t i = 0; i + 1 < teams.size(); i += 2)
      ex.text += "\n" + teams[i] + " " + std::to_string(goals[i]) + "-" + std::to_string(goals[i + 1]) + " " +
                 teams[i + 1];
    const int played = between(w.r, 8, 30);
    std::vector<Standing> table;
    for (const std::string& team : teams) {
      Standing s{team};
      s.won = static_cast<int>(w.r.below(played + 1));
      s.drawn = static_cast<int>(w.r.below(played - s.won + 1));
      s.lost = played - s.won - s.drawn;
      table.push_back(s);
    }
    std::stable_sort(table.begin(), table.end(),
                     [](const Standing& a, const Standing& b) { return a.points() > b.points(); });
    ex.paragraph();
    ex.text += "Team | Played | Won | Drawn | Lost | Points";
    for (const Standing& s : table)
      ex.text += "\n" + s.team + " | " + std::to_string(played) + " | " + std::to_string(s.won) + " | " +
                 std::to_string(s.drawn) + " | " + std::to_string(s.lost) + " | " +
                 std::to_string(s.points());
    ex.paragraph();
  }
  // A report of the first match: X beat Y by W (or drew), Z is a player.
  const bool draw = goals[0] == goals[1];
  const bool homeWon = goals[0] >= goals[1];
  ex.vars[kX] = teams[homeWon ? 0 : 1];
  ex.vars[kY] = teams[homeWon ? 1 : 0];
  ex.vars[kW] =
      std::to_string(std::max(goals[0], goals[1])) + "-" + std::to_string(std::min(goals[0], goals[1]));
  ex.vars[kZ] = ex.make("full_name");
  ex.sentence(draw ? "sport_draw_open" : "sport_win_open");
  Deck report(ex, draw ? "sport_draw" : "sport_win");
  for (int i = between(w.r, 4, 7); i > 0; --i) report.sentence();
}

void altStockList(Writer& w) {
  Expander& ex = w.ex;
  ex.sentence("stock_title");
  ex.paragraph();
  ex.text += "Item | Quantity | Location | Unit price";
  Deck items(ex, "stock_item");
  for (int i = between(w.r, 5, 14); i > 0; --i) {
    ex.text += "\n";
    items.next();
    ex.text += " ";
    ex.expand("stock_rest");
  }
  ex.paragraph();
  Deck notes(ex, "stock_note");
  for (int i = between(w.r, 1, 3); i > 0; --i) notes.sentence();
}

void altFaq(Writer& w) {
  Expander& ex = w.ex;
  ex.vars[kX] = ex.make("venue");
  ex.vars[kCITY] = ex.make("alt_city");
  ex.say("Frequently asked questions: the " + ex.vars[kX] + ", " + ex.vars[kCITY]);
  Deck pairs(ex, "faq_pair");
  for (int i = between(w.r, 4, 9); i > 0; --i) {
    ex.paragraph();
    pairs.next();
  }
}

void altNotice(Writer& w) {
  Expander& ex = w.ex;
  ex.vars[kX] = ex.make("venue");
  ex.sentence("notice_title");
  Deck body(ex, "notice_sentence");
  const int paragraphs = between(w.r, 2, 3);
  for (int p = 0; p < paragraphs; ++p) {
    ex.paragraph();
    for (int i = between(w.r, 2, 4); i > 0; --i) body.sentence();
  }
}

void altReview(Writer& w) {
  Expander& ex = w.ex;
  ex.vars[kX] = ex.make("gadget");
  const int stars = between(w.r, 1, 5);
  ex.sentence(stars <= 2 ? "review_title_bad" : stars == 3 ? "review_title_mixed" : "review_title_good");
  ex.text += "\nRating: " + std::to_string(stars) + " out of 5";
  ex.paragraph();
  ex.sentence("review_open");
  Deck body(ex, "review_sentence");
  for (int i = between(w.r, 4, 9); i > 0; --i) body.sentence();
  ex.paragraph();
  ex.sentence("review_byline");
}

// Departure times from firstHour to lastHour, at irregular intervals.
std::string departures(Random& r, int firstHour, int lastHour) {
  std::string times;
  int minute = firstHour * 60 + static_cast<int>(r.below(60));
  while (minute < lastHour * 60) {
    const char clock[5] = {static_cast<char>('0' + minute / 600), static_cast<char>('0' + minute / 60 % 10),
                           ':', static_cast<char>('0' + minute % 60 / 10),
                           static_cast<char>('0' + minute % 10)};
    if (!times.empty()) times += ' ';
    times.append(clock, 5);
    minute += 10 + 5 * static_cast<int>(r.below(10));
  }
  return times;
}

void altTimetable(Writer& w) {
  Expander& ex = w.ex;
  ex.sentence("timetable_title");
  static const char* const days[] = {"Monday to Friday", "Saturday", "Sunday"};
  const int dayCount = between(w.r, 2, 3);
  for (int d = 0; d < dayCount; ++d) {
    ex.paragraph();
    const int firstHour = between(w.r, 5, 9);
    const int lastHour = between(w.r, 13, 23);
    ex.text += std::string(days[d]) + "\n" + departures(w.r, firstHour, lastHour);
  }
  ex.paragraph();
  Deck notes(ex, "timetable_note");
  for (int i = between(w.r, 1, 3); i > 0; --i) notes.sentence();
}

}  // namespace

std::string altDocument(Random& random) {
  Writer w(altGrammar(), random, false);
  switch (random.below(10)) {
    case 0:
      altRecipe(w);
      break;
    case 1:
      altWeather(w);
      break;
    case 2:
      altLetter(w);
      break;
    case 3:
      altHowTo(w);
      break;
    case 4:
      altSports(w);
      break;
    case 5:
      altStockList(w);
      break;
    case 6:
      altFaq(w);
      break;
    case 7:
      altNotice(w);
      break;
    case 8:
      altReview(w);
      break;
    default:
      altTimetable(w);
      break;
  }
  return polish(w.ex.text);
}

}  // namespace nf::corpus
