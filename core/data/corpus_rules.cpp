// The synthetic corpus's grammar data: word lists, name lists and sentence templates, as rule tables that
// corpus_grammar.cpp compiles (the slot syntax is described in corpus_grammar.h). Data, not logic: a
// corpus change here changes every seed's output (see the byte-identity test in tests/core/test_data.cpp).
#include "data/corpus_rules.h"

namespace nf::corpus {

// ------------------------------------------------------------------------------------------------
// Names. Each main name is a single GPT-2 token after a space, so IOI prompts built from them line up.
// ------------------------------------------------------------------------------------------------

const std::vector<std::string>& mainFemaleNames() {
  static const std::vector<std::string> names = {
      "Mary",    "Sarah",     "Anna",     "Kate",      "Lisa",  "Emma",   "Alice", "Laura",
      "Linda",   "Jessica",   "Jennifer", "Amanda",    "Emily", "Rachel", "Amy",   "Rebecca",
      "Nicole",  "Megan",     "Michelle", "Elizabeth", "Susan", "Helen",  "Jane",  "Karen",
      "Julia",   "Grace",     "Lucy",     "Rose",      "Kelly", "Angela", "Katie", "Lauren",
      "Heather", "Christine", "Nancy",    "Carol",     "Jenny", "Lily",   "Ruth",  "Claire"};
  return names;
}
const std::vector<std::string>& mainMaleNames() {
  static const std::vector<std::string> names = {
      "John",    "James",   "Tom",     "David",   "Paul",   "Mark",    "Peter",   "Jack",
      "Michael", "Daniel",  "Robert",  "William", "Thomas", "Richard", "Charles", "George",
      "Joseph",  "Andrew",  "Steven",  "Kevin",   "Brian",  "Eric",    "Adam",    "Ryan",
      "Jason",   "Matthew", "Patrick", "Scott",   "Sam",    "Ben",     "Joe",     "Tim",
      "Steve",   "Mike",    "Frank",   "Henry",   "Harry",  "Max",     "Luke",    "Nick"};
  return names;
}
// The alternative style shares a few names with the main one and has many of its own.
const std::vector<std::string>& altFemaleNames() {
  static const std::vector<std::string> names = {
      "Olivia", "Sophie", "Chloe",  "Hannah", "Victoria", "Natalie", "Diana", "Julie", "Maria",
      "Eva",    "Nina",   "Martha", "Monica", "Ellen",    "Judy",    "Betty", "Mary",  "Anna",
      "Laura",  "Emma",   "Claire", "Helen",  "Fiona",    "Harriet", "Agnes", "Ingrid"};
  return names;
}
const std::vector<std::string>& altMaleNames() {
  static const std::vector<std::string> names = {
      "Oliver", "Ethan",  "Noah",   "Lucas", "Oscar", "Victor", "Martin", "Simon", "Philip", "Arthur",
      "Edward", "Walter", "Carl",   "Hugo",  "Leo",   "Felix",  "Ivan",   "Marco", "Stefan", "Graham",
      "Nigel",  "Colin",  "Gordon", "Ian",   "Neil",  "Roger",  "John",   "David", "Paul",   "Peter"};
  return names;
}

namespace {

// Comma-separated list of a vector, for building a rule body from the exported lists.
std::string joinWords(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& w : words) joined += w + ", ";
  return joined;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Exported lists: the IOI frames and the words they are filled with (also used throughout the main text).
// ------------------------------------------------------------------------------------------------

const std::vector<std::string>& placeWords() {
  static const std::vector<std::string> words = {
      "store",   "park",       "school",   "garden", "station",    "market",   "office", "beach",
      "library", "restaurant", "hospital", "museum", "bank",       "church",   "bakery", "farm",
      "zoo",     "river",      "lake",     "forest", "harbor",     "airport",  "hotel",  "cafe",
      "gym",     "pool",       "mall",     "hall",   "stadium",    "castle",   "bridge", "square",
      "village", "theater",    "factory",  "studio", "playground", "pharmacy", "island", "camp"};
  return words;
}

const std::vector<std::string>& objectWords() {
  static const std::vector<std::string> words = {
      "drink",  "book",    "ball",     "letter",  "key",    "ring",   "bag",     "gift",    "cake",
      "flower", "pen",     "hat",      "cup",     "box",    "coin",   "map",     "card",    "note",
      "phone",  "watch",   "toy",      "shirt",   "lamp",   "basket", "candle",  "pencil",  "bottle",
      "ticket", "plate",   "sandwich", "cookie",  "bowl",   "scarf",  "jacket",  "doll",    "camera",
      "clock",  "picture", "necklace", "snack",   "towel",  "brush",  "spoon",   "blanket", "pillow",
      "poster", "guitar",  "drum",     "mug",     "stone",  "shell",  "feather", "present", "bracelet",
      "wallet", "radio",   "bell",     "sweater", "puzzle", "balloon"};
  return words;
}

const std::vector<std::string>& frames() {
  static const std::vector<std::string> f = {
      "When {A} and {B} went to the {PLACE}, {S} gave a {OBJECT} to",
      "After {A} and {B} arrived at the {PLACE}, {S} handed a {OBJECT} to",
      "While {A} and {B} were at the {PLACE}, {S} passed a {OBJECT} to",
      "Then {A} and {B} walked to the {PLACE}, and {S} brought a {OBJECT} to",
      "When {A} and {B} got to the {PLACE}, {S} showed a {OBJECT} to",
      "After {A} and {B} met at the {PLACE}, {S} gave a {OBJECT} to",
      "Once {A} and {B} had left the {PLACE}, {S} threw a {OBJECT} to",
      "While {A} and {B} were working at the {PLACE}, {S} sent a {OBJECT} to"};
  return f;
}

namespace {

// ------------------------------------------------------------------------------------------------
// Words and templates shared by both styles: basic English only.
// ------------------------------------------------------------------------------------------------

const std::vector<RuleDef>& commonRules() {
  static const std::vector<RuleDef> rules = {
      {"number_word", Kind::Words, "two, three, four, five, six, seven, eight, nine, ten, eleven, twelve"},
      {"small_number", Kind::Words, "two, three, four, five"},
      {"ordinal", Kind::Words, "first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth"},
      {"weekday", Kind::Noun, "Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday"},
      {"month", Kind::Words,
       "January, February, March, April, May, June, July, August, September, October, November, December"},
      {"color", Kind::Words, "red, blue, green, yellow, white, black, brown, orange, purple, pink"},
      {"minute", Kind::Words, "00, 05, 10, 15, 20, 30, 40, 45, 50"},
      {"year", Kind::Text, "19{int:50-99}\n20{int2:0-23}"},
  };
  return rules;
}

// ------------------------------------------------------------------------------------------------
// Main style: stories, facts, dialogues, descriptions, diaries (American spelling).
// ------------------------------------------------------------------------------------------------

const std::vector<RuleDef>& mainRules() {
  static const std::vector<RuleDef> rules = {
      // --- word lists ---
      {"city", Kind::Words,
       "Paris, London, Rome, Berlin, Madrid, Boston, Chicago, Tokyo, Sydney, Dublin, Oslo, Vienna, Prague,"
       "Athens, Cairo, Toronto, Denver, Seattle, Moscow, Lima, Miami, Dallas, Atlanta, Houston, Phoenix,"
       "Austin, Portland, Nairobi, Delhi, Mumbai, Seoul, Bangkok, Havana, Bogotá, Venice, Florence, Milan,"
       "Naples, Barcelona, Istanbul, Denver, Memphis, Nashville, Detroit, Quebec, Kyoto, Osaka"},
      {"country", Kind::Words,
       "France, Italy, Spain, Japan, Canada, Brazil, Egypt, Mexico, India, China, Germany, Greece, Norway,"
       "Ireland, Peru, Kenya, Australia, Chile, Turkey, Morocco, Sweden, Korea, Argentina, Vietnam"},
      {"language", Kind::Words,
       "French, Italian, Spanish, German, Japanese, Chinese, Greek, Russian, Arabic, Portuguese, Korean,"
       "Turkish, Hindi, Swedish"},
      {"job", Kind::Noun,
       "baker, teacher, doctor, nurse, farmer, bus driver, painter, writer, singer, cook, pilot, dentist,"
       "lawyer, builder, gardener, waiter, student, librarian, scientist, engineer, mechanic, police officer,"
       "firefighter, artist, musician, photographer, carpenter, tailor, actor, architect, shopkeeper,"
       "lifeguard, mail carrier, vet, zookeeper, astronaut, clown, inventor, sailor, jeweler"},
      {"animal", Kind::Noun,
       "dog, cat, horse, cow, pig, sheep|sheep, goat, duck, rabbit, mouse|mice, bird, fox, bear, lion, tiger,"
       "elephant, monkey, frog, owl, wolf|wolves, deer|deer, squirrel, turtle, snake, bee, butterfly, "
       "chicken,"
       "goose|geese, donkey, parrot, hamster, puppy, kitten, penguin, giraffe, zebra, camel, whale, dolphin,"
       "beaver, hedgehog, swan, crow, eagle, lizard, ant, spider, seal, otter"},
      {"small_animal", Kind::Noun,
       "mouse|mice, squirrel, rabbit, bird, butterfly, frog, lizard, duck, chicken"},
      {"pet", Kind::Noun,
       "dog, cat, rabbit, hamster, parrot, turtle, goldfish|goldfish, puppy, kitten, canary"},
      {"fruit", Kind::Noun,
       "apple, banana, orange, pear, peach, plum, lemon, cherry, grape, strawberry, mango|mangoes, melon,"
       "apricot, lime, coconut, fig, blueberry, raspberry, pineapple, watermelon"},
      {"vegetable", Kind::Noun,
       "carrot, potato|potatoes, tomato|tomatoes, onion, cucumber, pepper, cabbage, pumpkin, bean, pea, "
       "radish,"
       "beet, turnip, ear|ears of corn"},
      {"baked", Kind::Noun,
       "cake, pie, cookie, muffin, cupcake, loaf|loaves of bread, pretzel, bagel, apple pie"},
      {"dish", Kind::Noun,
       "sandwich, pie, pizza, salad, cake, cookie, muffin, burger, pancake, omelet, taco, hot dog, donut,"
       "bowl|bowls of soup, bowl|bowls of noodles, slice|slices of pizza, cupcake, waffle, pretzel,"
       "bagel, cheeseburger, apple pie, cherry pie, fruit salad"},
      {"mass_food", Kind::Words,
       "bread, rice, cheese, soup, pasta, chocolate, honey, ice cream, jam, yogurt, popcorn, cereal, candy,"
       "toast, spaghetti, peanut butter, fried rice, oatmeal, corn bread"},
      {"hot_drink", Kind::Words, "tea, coffee, hot chocolate, cocoa, warm milk"},
      {"cold_drink", Kind::Words, "milk, juice, water, lemonade, orange juice, apple juice, soda, iced tea"},
      {"food", Kind::Noun, "{fruit}, {vegetable}, {dish}"},
      {"furniture", Kind::Noun,
       "table, chair, bed, sofa, shelf|shelves, desk, bench, cupboard, dresser, piano, windowsill, armchair,"
       "kitchen table, bookcase, doorstep, staircase, rug"},
      {"room", Kind::Noun,
       "kitchen, bedroom, living room, bathroom, attic, hallway, basement, garage, study"},
      {"dwelling", Kind::Noun, "house, apartment, cottage, cabin, farmhouse, bungalow, tower, houseboat"},
      {"container", Kind::Noun, "box, bag, basket, jar, backpack, suitcase, bucket, drawer, pocket, tin"},
      {"tree", Kind::Noun,
       "oak tree, pine tree, apple tree, maple tree, birch tree, palm tree, willow, cherry tree"},
      {"flower_kind", Kind::Noun, "rose, tulip, daisy, sunflower, lily, violet, poppy, orchid"},
      {"instrument", Kind::Words, "piano, guitar, violin, drums, flute, trumpet, cello, harmonica, banjo"},
      {"game", Kind::Words,
       "soccer, tennis, chess, basketball, baseball, cards, golf, hide and seek, checkers,"
       "board games, catch, tag"},
      {"subject", Kind::Words, "math, history, science, music, art, geography, biology, chemistry, poetry"},
      {"vehicle", Kind::Noun, "bus, train, ferry, taxi, subway, tram, plane, boat"},
      {"clothing", Kind::Noun,
       "shirt, coat, hat, sweater, scarf, dress, jacket, skirt, pair|pairs of socks,"
       "pair|pairs of shoes, pair|pairs of gloves, raincoat, cap"},
      {"book_kind", Kind::Noun,
       "book, story, newspaper, magazine, poem, comic book, novel, letter, fairy tale"},
      {"water", Kind::Words, "river, lake, sea, pond, pool, stream, ocean"},
      {"field", Kind::Words, "field, meadow, forest, hills, valley, woods, garden, mountains"},
      // What Q or R is to P ("{P.his} {Q.rel} {Q}"), by gender; the cast code picks the list.
      {"rel_f", Kind::Words,
       "sister, cousin, friend, neighbor, aunt, grandmother, daughter, classmate, best friend"},
      {"rel_m", Kind::Words,
       "brother, cousin, friend, neighbor, uncle, grandfather, son, classmate, best friend"},
      {"season", Kind::Words, "spring, summer, fall, winter"},
      {"broken_thing", Kind::Words,
       "old bike, kitchen door, broken chair, leaking roof, garden gate, radio,"
       "window, clock, fence, lamp"},
      {"street_name", Kind::Words,
       "Main, Oak, Elm, Hill, Park, Market, Church, River, Maple, Cedar, Lake, Mill,"
       "Bridge, Garden, Station, Spring"},
      {"street_kind", Kind::Words, "Street, Road, Avenue, Lane"},
      {"street", Kind::Text, "{street_name} {street_kind}"},

      // --- adjectives and adverbs ---
      {"adj_size", Kind::Words,
       "big, small, tiny, huge, large, little, tall, short, long, narrow, wide, giant"},
      {"adj_home", Kind::Words,
       "old, new, modern, small, tiny, cozy, brand new, big, pretty, yellow, white, quiet"},
      {"pet_name", Kind::Words,
       "Buddy, Bella, Lucky, Coco, Daisy, Rocky, Milo, Luna, Teddy, Pepper, Ginger, Biscuit,"
       "Whiskers, Socks, Patch, Bubbles, Shadow, Snowball"},
      {"adj_look", Kind::Words,
       "beautiful, shiny, dusty, clean, dirty, bright, dark, soft, hard, heavy, light, broken, strange, "
       "simple,"
       "fancy, plain, round, square, smooth, rough, colorful, wooden, plastic, metal, golden, silver, "
       "striped,"
       "old, tiny, huge, lovely, ugly, {color}, {color}, little, pretty, famous, useful, rare, expensive, "
       "cheap"},
      {"adj_pet", Kind::Words,
       "little, big, tiny, fluffy, lazy, friendly, old, young, noisy, clever, sleepy, playful"},
      {"adj_mood", Kind::Words,
       "happy, sad, tired, angry, excited, nervous, calm, proud, worried, surprised, bored, hungry, thirsty,"
       "scared, lonely, cheerful, curious, sleepy, grateful, upset, relaxed, confused, glad, jealous, "
       "afraid"},
      {"adj_char", Kind::Words,
       "kind, brave, clever, funny, shy, friendly, quiet, honest, patient, lazy, busy, careful, generous,"
       "polite, gentle, serious, wise, curious, strong, cheerful, loud, smart, helpful, stubborn, old, "
       "young"},
      {"adj_weather", Kind::Words,
       "sunny, rainy, windy, cloudy, snowy, foggy, cold, warm, hot, bright, gray, stormy, chilly, beautiful"},
      {"adj_place", Kind::Words,
       "quiet, busy, crowded, empty, noisy, peaceful, beautiful, famous, old, new, small, large, clean, dark,"
       "bright, pleasant, cozy, lively, strange, warm, cold, huge"},
      {"adj_food", Kind::Words,
       "fresh, sweet, sour, salty, delicious, warm, cold, spicy, ripe, crunchy, soft, juicy, hot, tasty, "
       "huge"},
      {"adj_crowd", Kind::Words, "busy, quiet, crowded, empty, noisy, peaceful, full of people, closed"},
      {"sky_color", Kind::Words, "blue, gray, pink, orange, dark, pale, clear"},
      {"adv_manner", Kind::Words,
       "quickly, slowly, carefully, quietly, loudly, happily, sadly, gently, suddenly, calmly, patiently,"
       "nervously, proudly, politely, softly, eagerly, silently, warmly, kindly, bravely, angrily, sleepily"},
      {"time_past", Kind::Words,
       "later that day, the next morning, after a while, that evening, a few minutes later, on {weekday},"
       "in the afternoon, at noon, early in the morning, {number_word} days later, before lunch, after "
       "dinner,"
       "at {int:1-12} o'clock, on {month} {int:1-28}, around {int:1-12}:{minute}, suddenly, meanwhile, then,"
       "soon, after school, in the evening, last {weekday}, that night, one {adj_weather} day,"
       "on the last day of {month}, in the summer of {year}"},
      {"time_later", Kind::Words,
       "tomorrow, next week, on {weekday}, after lunch, before dinner, in the morning, next {season},"
       "as soon as possible, in {number_word} days, on {month} {int:1-28}, later that evening"},

      // --- verb phrases: base|past|participle|-ing, the rest derived ---
      {"vp", Kind::Verb, "{vp_home}, {vp_out}, {vp_food}, {vp_social}, {vp_hobby}, {vp_thing}"},
      {"vp_leisure", Kind::Verb, "{vp_out}, {vp_hobby}, {vp_social}, {vp_food}"},
      {"routine", Kind::Verb, R"(
        drink|drank|drunk a cup of {hot_drink}, walk the dog, read|read|read the newspaper,
        feed|fed|fed the {pet},
        go|went|gone for a run, take|took|taken the {vehicle} to work, make|made|made breakfast,
        water the plants,
        listen to the radio, do|did|done some exercise, eat|ate|eaten {mass_food} for breakfast,
        write|wrote|written in a diary, practice the {instrument}, ride|rode|ridden a bike to the {place})"},
      {"vp_home", Kind::Verb, R"(
        clean the {room}, cook dinner, bake a {adj_food} {baked}, wash the dishes, water the {flower_kind.pl},
        paint the {furniture} {color}, fix the {broken_thing}, read|read|read a {book_kind} about {animal.pl},
        write|wrote|written a letter to {N}, sweep|swept|swept the floor, make|made|made a cup of {hot_drink},
        feed|fed|fed the {pet}, tidy the {room}, fold the laundry, sort the old {object.pl},
        listen to the radio, take|took|taken a long nap, put|put|put|putting the {object.pl} away,
        hang|hung|hung a picture in the {room}, build|built|built a {adj_size} bookshelf,
        knit|knitted a {clothing},
        open|opened the windows, vacuum the {room}, iron the {clothing.pl}, bake|baked bread)"},
      {"vp_out", Kind::Verb, R"(
        walk to the {place}, go|went|gone to the {place}, visit the {place},
        run|ran|run|running to the {place},
        ride|rode|ridden a bike to the {place}, take|took|taken the {vehicle} to {city},
        drive|drove|driven to the {place}, swim|swam|swum|swimming in the {water}, climb a {adj_size} {tree},
        pick {fruit.pl} in the garden, play {game} in the park, feed|fed|fed the ducks at the lake,
        sit|sat|sat|sitting on a bench in the park, wait for the {vehicle}, look at the stars,
        watch the {animal.pl} in the {field}, explore the old {place}, wander through the {field},
        walk along the {water}, shop|shopped for {clothing.pl}, jog|jogged around the {place},
        hike|hiked in the {field}, fly|flew|flown a kite on the hill, go|went|gone fishing in the {water})"},
      {"vp_food", Kind::Verb, R"(
        eat|ate|eaten a {dish}, eat|ate|eaten some {mass_food}, drink|drank|drunk a glass of {cold_drink},
        buy|bought|bought {number_word} {fruit.pl}, share a {dish} with {N}, taste the {adj_food} {mass_food},
        cut|cut|cut|cutting the {fruit.pl} into pieces, peel {number_word} {vegetable.pl},
        make|made|made a {dish},
        order a {dish} and a glass of {cold_drink}, grow|grew|grown {vegetable.pl} in the garden,
        make|made|made {mass_food} for everyone, buy|bought|bought a bag of {fruit.pl},
        try|tried a new {dish})"},
      {"vp_social", Kind::Verb, R"(
        call {N}, visit an old friend, help a neighbor, meet|met|met {N} for lunch,
        write|wrote|written a postcard to {N}, talk to {N} about {animal.pl}, play {game} with {N},
        invite {N} to the {place}, thank {N} for the {object}, wave to {N},
        tell|told|told {N} a funny story, send|sent|sent a message to {N}, visit {N} in {city},
        hug|hugged {N}, chat|chatted with {N} at the {place}, say|said|said hello to {N})"},
      {"vp_hobby", Kind::Verb, R"(
        play the {instrument}, practice the {instrument}, sing|sang|sung a song,
        draw|drew|drawn a picture of a {animal},
        paint a {color} {animal}, learn a new song, study {subject}, do|did|done a puzzle,
        take|took|taken photos of {animal.pl}, watch a movie about {animal.pl},
        write|wrote|written a poem about the {season}, dance in the {room}, read|read|read a {book_kind},
        learn a few words of {language}, build|built|built a model {vehicle},
        plant {flower_kind.pl} in the garden,
        collect {object.pl}, write|wrote|written a story about a {adj_char} {animal})"},
      {"vp_thing", Kind::Verb, R"(
        find|found|found a {adj_look} {object}, lose|lost|lost the {object}, carry a {adj_size} {container},
        open the {container}, hide|hid|hidden the {object} under the {furniture}, drop|dropped the {object},
        clean the {object}, look for the {object}, wrap|wrapped a {object} in {color} paper,
        put|put|put|putting the {object} on the {furniture}, show|showed|shown the {object} to {N},
        borrow a {object} from {N}, return the {object}, fix the {object}, paint the {object} {color},
        sell|sold|sold the old {object}, buy|bought|bought a {adj_look} {object})"},
      {"vp_pair", Kind::Verb, R"(
        play {game}, walk along the {water}, cook dinner, watch a movie, build|built|built a snowman,
        talk for hours, bake {baked.pl}, plan|planned a trip to {city}, paint the fence, look at old photos,
        sing|sang|sung songs, dance in the {room}, share a {dish}, clean the {room}, pick {fruit.pl},
        do|did|done a puzzle, fly|flew|flown a kite, sit|sat|sat|sitting by the {water},
        read|read|read stories, feed|fed|fed the {animal.pl}, count the stars, race|raced to the {place})"},
      {"arrive_vp", Kind::Verb, R"(
        arrive, come|came|come home, knock on the door, call, walk into the room,
        come|came|come back from the {place}, open the door, return from {city})"},
      {"animal_act", Kind::Verb, R"(
        make|made|made a strange noise, run|ran|run|running away, jump over the fence,
        sleep|slept|slept in the sun,
        chase a {small_animal}, eat|ate|eaten some {mass_food}, hide|hid|hidden under the {furniture},
        climb a tree, swim|swam|swum|swimming across the {water}, run|ran|run|running around the {place},
        wag|wagged its tail, play with a ball, look at the {object}, sit|sat|sat|sitting by the door,
        roll in the grass, follow the {vehicle}, dig|dug|dug|digging a hole in the garden)"},
      {"skill", Kind::Text, R"(
        swim
        ride a bike
        play the {instrument}
        speak {language}
        cook {dish.pl}
        drive a car
        bake bread
        draw {animal.pl}
        dance
        sing
        juggle
        knit
        sail a boat
        fly a kite
        play {game}
        whistle
        grow {vegetable.pl})"},

      // --- clauses ---
      {"reason", Kind::Text, R"(
        {P.he} was {adj_mood}
        it was {adj_weather} outside
        the {place} was closed
        {P.he} had forgotten the {object}
        {Q} was waiting at the {place}
        {P.his} {pet} was sick
        the {vehicle} was late
        {P.he} had a lot of work to do
        it was {R}'s birthday
        the {object} was broken
        there was no {mass_food} left
        {P.he} was too {adj_mood} to go out
        the road to the {place} was blocked)"},
      {"clause_past", Kind::Text, R"(
        {R} had {vp.pp}
        the {place} was closed on {weekday.pl}
        {P.he} had lost the {object}
        the {animal} had run away
        it would rain soon
        the {dish} was ready
        {R} wanted to {vp}
        nobody knew where the {object} was
        the {place} in {city} was {adj_place}
        {Q.he} had never seen a {animal}
        the {vehicle} to {city} was late again
        there were {number_word} {animal.pl} in the {field}
        {R} was moving to {city}
        the {object} belonged to {N})"},
      {"topic", Kind::Text, R"(
        {animal.pl}
        the {season}
        the trip to {city}
        the old days
        the {place}
        {job.pl}
        music
        the future
        their plans for {weekday}
        the {object} {Q} had lost
        {subject}
        life in {city})"},

      // --- stories (past tense) ---
      {"story_open", Kind::Text, R"(
        {P} lived in a {adj_size} {dwelling} near the {place} in {CITY}.
        Once upon a time, there was a {adj_char} {job} named {P}.
        It was a {adj_weather} {weekday} morning in {CITY}.
        {P} had always wanted to visit {city}.
        On {weekday}, {P} woke up early and looked out of the window.
        Last {season}, {P} and {Q} moved to a {adj_home} {dwelling} in {CITY}.
        Every {weekday}, {P} walked to the {place} with {P.his} {pet}.
        {P} was a {adj_char} {job} who lived in {CITY}.
        Nobody in {CITY} knew that {P} could {skill}.
        This is a story about {P} and {P.his} {Q.rel} {Q}.
        The first time {P} met {Q}, it was raining.
        It was the {ordinal} day of {month}, and {P} was {adj_mood}.
        When {P} was {int:6-12} years old, {P.he} found a {adj_look} {object} in the {room}.
        {P} and {Q} had been friends since they were children.
        In a {adj_place} town near {CITY}, there lived a {job} called {P}.
        {P} had a {adj_pet} {pet} and a {adj_home} {dwelling} on {street}.
        It all started on a {adj_weather} afternoon in {month}.)"},
      {"story_event", Kind::Text, R"(
        {time_past}, {P} {vp.past}.
        {P} {vp.past} {adv_manner}.
        {P} {vp.past}, and then {P.he} {vp.past}.
        {P} wanted to {vp}, but {P.he} had to {vp} first.
        {P} was {vp.ing} when {Q} {arrive_vp.past}.
        While {P} was {vp.ing}, {Q} {vp.past}.
        After {P} had {vp.pp}, {P.he} {vp.past}.
        {P} could not {vp} because {reason}.
        {P} decided to {vp} before {Q} {arrive_vp.past}.
        {Q} asked {P} to {vp}, so {P.he} did.
        {P} felt {adj_mood} because {P.he} had {vp.pp}.
        {P} promised {Q} that {P.he} would {vp} {time_later}.
        {P} and {Q} {vp_pair.past} together.
        {P} saw a {adj_size} {animal} near the {place}.
        The {pet} {animal_act.past} {adv_manner}.
        {P} found a {adj_look} {object} under the {furniture}.
        {Q} thanked {P} for the {adj_look} {object}.
        "{statement}," {P} said to {Q}.
        {P} told {Q} that {clause_past}.
        It was {adj_weather} outside, so {P} {vp.past}.
        {P} had never {vp.pp} before.
        {P} put the {object} in {P.his} {container} and walked to the {place}.
        {P} looked at the {adj_size} {object} and smiled.
        The {place} was {adj_place} that day.
        {P} bought a {adj_look} {object} for {int:2-40} dollars.
        {P} spent {number_word} hours at the {place}.
        By the time {Q} {arrive_vp.past}, {P} had already {vp.pp}.
        {P} did not know that {clause_past}.
        {Q} laughed when {P} {vp.past}.
        {P} and {Q} walked to the {place} and {vp_pair.past}.
        On the way to the {place}, {P} met {R}, who was {vp.ing}.
        {R} was a {adj_char} {job} who lived near the {place}.
        {P} asked {R} where the {place} was.
        {R} showed {P} the way to the {place}.
        "{question}" asked {Q}.
        {P} thought about {topic} for a long time.
        {P} was so {adj_mood} that {P.he} {vp.past}.
        {P.his} {pet} {animal_act.past} while {P.he} was {vp.ing}.
        Because {reason}, {P} stayed at home and {vp.past}.
        {P} tried to {vp}, but it was harder than {P.he} expected.
        {Q} gave {P} some advice about {topic}.
        {P} remembered that {P.he} had left the {object} at the {place}.
        {P} ran back to the {place} to get the {object}.
        {P} wrote {Q} a short note: "{statement}."
        Everyone at the {place} was talking about the {animal}.
        {P} counted the {object.pl}. There were {int:3-30} of them.
        {number_word} {animal.pl} were sitting on the {furniture}.
        The {object} that {Q} had given {P.him} was on the {furniture}.
        {P} and {Q} sat under {tree.pl} and talked about {topic}.
        {P} could hear the {animal.pl} from the {room}.
        The {vehicle} to {city} left at {int:1-12}:{minute}, and {P} was almost late.
        {P} had to wait {int:5-50} minutes for the {vehicle}.
        {P} smiled at {Q}, and {Q.he} smiled back.
        {P} said goodbye to {Q} and went home.
        {P} and {Q} had lunch at the {place}, and {P} ordered a {dish}.
        {P} was tired, but {P.he} was {adj_mood}.
        {P} did not like {mass_food}, but {P.he} ate it anyway.
        {Q} offered {P} a cup of {hot_drink}.
        {P} asked {Q} if {Q.he} wanted to {vp}.
        {Q} said that {Q.he} would rather {vp}.
        {P} finally {vp.past}, and {Q} was very {adj_mood}.
        The {adj_size} {animal} followed {P} all the way to the {place}.
        {P} and {Q} both wanted the last {dish}, so they shared it.
        {P} lent {Q} {P.his} {object}, and {Q} promised to give it back on {weekday}.
        {Q} gave the {object} back to {P} a week later.
        {P} looked everywhere for the {object}, but {P.he} could not find it.
        The {object} was not in the {room}, and it was not in the {container} either.
        Inside the {container}, {P} found {number_word} {adj_look} {object.pl}.
        {P} knew that {Q} would be {adj_mood} if {P.he} {vp.past}.
        {Q} had been {vp.ing} all morning, so {Q.he} was {adj_mood}.
        {P} asked {P.self} why {P.he} had not {vp.pp} sooner.
        {R} came to the {place} with {R.his} {pet}.
        {R} told {P} and {Q} a story about a {adj_char} {animal}.
        The {place} smelled of {mass_food} and {flower_kind.pl}.
        {P} was not sure whether {P.he} should {vp} or {vp}.
        Although it was {adj_weather}, {P} and {Q} {vp_pair.past}.
        {P} ate {number_word} {fruit.pl} and drank a glass of {cold_drink}.
        The sky was {sky_color} and the {water} was calm.
        {P} wore {P.his} {adj_look} {clothing} to the {place}.
        When the {vehicle} stopped, {P} got off and walked to the {place}.
        It took {P} {number_word} hours to {vp}.
        {P} has a {adj_pet} {pet} named {pet_name}, and it {animal_act.past} that morning.
        {Q} was surprised to see {P} at the {place}.
        {P} bought a {T=object} at the {place}, but the {T} was broken.
        {R} had a {T=pet}, and the {T} {animal_act.past} whenever {P} came to visit.)"},
      {"story_close", Kind::Text, R"(
        In the end, {P} went home {adj_mood} and tired.
        That night, {P} slept well.
        {P} never forgot that day at the {place}.
        It had been a long day, but a good one.
        The next day, {P} told everyone about the {animal}.
        {P} and {Q} are still good friends today.
        From then on, {P} {vp.past} every {weekday}.
        When {P} got home, {P.he} {vp.past} and went to bed.
        Years later, {P} still kept the {object} in a box under {P.his} bed.
        {P} smiled. It was the best {weekday} of the year.
        And that is how {P} learned to {skill}.
        After that, {P} visited the {place} every {season}.
        {Q} said it was the best day of {Q.his} life.
        The {object} is still on the {furniture} in {P.his} {room}.)"},

      // --- plans (future) and habits (present) ---
      {"plan_sentence", Kind::Text, R"(
        Tomorrow, {P} will {vp}.
        Next {weekday}, {P} is going to {vp}.
        {P} hopes to {vp} before the end of {month}.
        If the weather is {adj_weather}, {P} will {vp}.
        {P} wants to {vp_leisure}, and then {P.he} will {vp}.
        On {weekday.pl}, {P} usually {vp.s}.
        {P} will not {vp} until {Q} {arrive_vp.s}.
        After {P.he} {vp.s}, {P.he} will {vp}.
        {P} and {Q} are going to {vp_pair} on {weekday}.
        {P} is thinking about {vp.ing} next {season}.
        At {int:1-12}:{minute}, {P} will meet {Q} at the {place}.
        {P} has already {vp.pp}, so now {P.he} can {vp}.)"},

      // --- facts about people (present tense) ---
      {"bio_sentence", Kind::Text, R"(
        {P.he} works as a {job} in {CITY}.
        {P.he} is {int:20-79} years old.
        {P.he} was born in {city} on {month} {int:1-28}, {year}.
        {P.his} favorite food is {mass_food}.
        {P.his} favorite color is {color}.
        {P.he} has {number_word} {pet.pl}.
        {P.he} has a {adj_pet} {pet} called {pet_name}.
        {P.he} speaks {language} and {language}.
        Every morning, {P.he} {routine.s}.
        On weekends, {P.he} likes to {vp_leisure}.
        {P.he} has never {vp.pp}.
        {P.his} {Q.rel} {Q} lives in {city}.
        {P.he} is {adj_char} and {adj_char}.
        When {P.he} was a child, {P.he} wanted to be a {job}.
        {P.he} is learning to {skill}.
        Next year, {P.he} will {vp}.
        {P.he} can {skill}, but {P.he} cannot {skill}.
        {P.he} lives on {street} in a {adj_home} {dwelling}.
        {P.he} goes to the {place} every {weekday}.
        {P.he} is afraid of {animal.pl}.
        {P.his} best friend is {Q}, a {job} from {city}.
        {P.he} has been to {country} {number_word} times.
        {P.he} drinks {hot_drink} every morning and {cold_drink} at lunch.
        {P.he} usually wears a {color} {clothing}.
        In {P.his} free time, {P.he} likes to {skill}.
        {P.he} {routine.s} every day before work.
        {P.he} has worked at the {place} since {year}.
        {P.his} {pet} is called {pet_name}.
        {P.he} wants to visit {country} one day.
        Last year, {P.he} {vp_leisure.past} for the first time.
        {P.he} moved to {CITY} in {year}.
        {P.his} {room} is full of {object.pl}.
        People say that {P} is very {adj_char}.
        {P.he} does not like {mass_food}.)"},

      // --- dialogue: questions end with '?', statements get their punctuation from the tag ---
      {"question", Kind::Text, R"(
        Where is the {object}?
        Do you want to {vp}?
        Have you ever {vp.pp}?
        What are you doing?
        Can you help me {vp}?
        Why are you so {adj_mood}?
        When will {R} come back?
        Did you see the {animal} near the {place}?
        How was your day at the {place}?
        Where did you put my {object}?
        Would you like some {mass_food}?
        Is it true that {clause_past}?
        What time does the {vehicle} leave?
        Who gave you that {object}?
        Are you coming to the {place} tomorrow?
        Can you {skill}?
        Why did you {vp}?
        How many {animal.pl} did you see?
        Is the {animal} your favorite animal?
        Do you know where {R} is?
        Shall we {vp_pair}?
        Is the {place} open on {weekday.pl}?)"},
      {"statement", Kind::Text, R"(
        I put it on the {furniture}
        Yes, I would love to
        No, I have never {vp.pp}
        I am {vp.ing}
        I {vp.past} this morning
        Maybe next {weekday}
        It was {adj_place} and {adj_place}
        I think {R} is at the {place}
        The {vehicle} leaves at {int:1-12}:{minute}
        I found this {object} at the {place}
        We should {vp_pair} tomorrow
        I am too {adj_mood} to {vp}
        My {pet} {animal_act.past} again
        Let's go to the {place}
        I saw {number_word} {animal.pl} in the {field}
        I have to {vp} first
        That is a {adj_look} {object}
        {R} gave it to me
        I would rather {vp}
        I will {vp} later
        Thank you for the {object}
        I learned to {skill} when I was {int:5-15}
        It is too {adj_weather} to go out
        I do not know, but {R} might know
        The {place} is closed on {weekday.pl}
        Do not forget your {object})"},
      {"ask_tag", Kind::Words,
       "asked {P}, {P} asked, {P} wanted to know, asked {P} {adv_manner}, {P} asked {Q}"},
      {"say_tag", Kind::Words,
       "said {P}, {P} said, {P} replied, {P} answered, said {P} {adv_manner}, {P} whispered, {P} laughed,"
       "{P} said with a smile, {P} told {Q}"},
      {"dialogue_narration", Kind::Text, R"(
        {P} looked at {Q} and smiled.
        {P} put down the {object}.
        {Q} waited for an answer.
        For a moment, nobody said anything.
        {P} thought for a while.
        {Q} nodded.
        {P} poured {Q} a cup of {hot_drink}.
        Outside, the {animal.pl} were making a lot of noise.
        {P} shook {P.his} head.
        {Q} laughed {adv_manner}.
        {P} picked up the {object} and looked at it.
        The {vehicle} was late, so they kept talking.)"},

      // --- descriptions ---
      {"desc_place", Kind::Text, R"(
        The {T} in {CITY} is {adj_place} and {adj_place}.
        It was built in {year}.
        There are {number_word} {adj_size} {tree.pl} near the entrance.
        Every {weekday}, people come here to {vp}.
        In the {season}, the {T} is full of {animal.pl}.
        The {T} opens at {int:6-10} in the morning and closes at {int:5-11} in the evening.
        Next to the {T}, there is a {adj_place} {place}.
        Many {job.pl} work at the {T}.
        The {T} has a {color} door and {number_word} windows.
        Children love the {T} because they can {vp_pair} there.
        The {T} is on {street}, not far from the {place}.
        In the middle of the {T}, there is a {adj_size} statue of a {animal}.
        On {weekday.pl}, the {T} is {adj_crowd}.
        The {T} is famous for its {adj_food} {mass_food}.
        Visitors from {city} often come to see the {T}.)"},
      {"desc_animal", Kind::Text, R"(
        The {T} is a {adj_char} animal.
        A {T} can be {adj_size} or {adj_size}.
        Most {animal.pl} do not like the {season}, but the {T} does.
        The {T} has {adj_size} eyes and a {adj_size} mouth.
        A young {T} often plays with baby {animal.pl}.
        Last {season}, {P} saw a {T} near the {place}.
        {P} has always wanted to draw a {T}.
        A {T} is faster than a {animal}, but slower than a {animal}.
        Some {job.pl} keep a {T} at the {place}.
        A young {T} is called a baby {T}.
        The {T} likes to eat {mass_food} and {fruit.pl}.
        In the {season}, the {T} sleeps for a long time.
        Many people think the {T} is {adj_char}, but it is really {adj_char}.
        You can see a {T} at the zoo in {city}.
        The {T} is usually {color} or {color}.
        A {T} can live for {int:3-40} years.)"},
      {"desc_home", Kind::Text, R"(
        {P.his} {T} is {adj_place} and {adj_place}.
        There is a {adj_look} {furniture} in the corner.
        On the {furniture}, there are {number_word} {color} {object.pl}.
        The walls of the {T} are {color}.
        From the window, {P} can see the {place}.
        {P} keeps {P.his} {object.pl} in a {adj_look} {container}.
        A {adj_look} picture of a {animal} hangs above the {furniture}.
        The {T} smells of {mass_food}.
        {P.his} {pet} sleeps on the {furniture}.
        Next to the {T} is the {room}.
        Every {weekday}, {P} cleans the {T} from top to bottom.
        The {T} was painted {color} in {year}.
        In the morning, the sun shines into the {T}.
        {P} reads in the {T} every evening.
        There is an old {object} on the floor of the {T}.)"},

      // --- diary (first person) ---
      {"diary_sentence", Kind::Text, R"(
        Today I {vp.past}.
        This morning I {vp.past} with {Q}.
        I was {adj_mood} because {Q} had {vp.pp}.
        Tomorrow I will {vp}.
        I have never {vp.pp}, but I want to.
        {Q} and I {vp_pair.past}.
        My {pet} {animal_act.past} while I was {vp.ing}.
        I wish I could {skill}.
        It was {adj_weather} all day, so I {vp.past}.
        At the {place}, I met {R}, who was {vp.ing}.
        I forgot my {object} at the {place} again.
        {Q} says I should {vp} more often.
        I think I will {vp} on {weekday}.
        We had {mass_food} for dinner.
        I am a little {adj_mood} tonight.
        After lunch, I {vp.past} and then I {vp.past}.)"},

      // --- chants and refrains, for repeated spans ---
      {"chant_line", Kind::Text, R"(
        {color} and {color}, the {animal} is {adj_look}
        one, two, three, the {animal} climbs the tree
        round and round the {place} we go
        rain or shine, the {object} is mine
        {number_word} little {animal.pl} sitting in a row
        hop, hop, hop, to the {place} and stop
        {adj_size} {animal}, {adj_size} {animal}, where did you go
        up the hill and down the {water}, {name} carries a {object}
        clap your hands and stamp your feet, the {place} is at the end of the street
        the {animal} sleeps, the {animal} sings, the {season} comes with {adj_look} things)"},
      // --- document glue: openings, IOI follow-ups, and the repeated-span episodes ---
      {"ioi_follow", Kind::Text, R"(
        {IO} thanked {S} for the {OBJECT}.
        {IO} smiled and put the {OBJECT} in a bag.
        {S} said it was a present.
        "Thank you," said {IO}.
        {IO} had wanted a {OBJECT} for a long time.
        {S} had bought the {OBJECT} in {city}.
        It was the {ordinal} {OBJECT} {IO} had received that week.)"},
      {"bio_open", Kind::Text, R"(
        {P} lives in {CITY}.
        {P} is a {job} from {CITY}.
        This is {P}.
        Let me tell you about {P}.
        {P} is a {adj_char} {job} who lives in {CITY}.
        {P} has lived in {CITY} for {number_word} years.)"},
      {"summary_intro", Kind::Text, "To sum up:\nSo, to remember:\nIn short:\nHere is who lives where:"},
      {"dialogue_open", Kind::Text, R"(
        {P} and {Q} were sitting in the {room}.
        It was {adj_weather} outside, and {P} and {Q} were at the {place}.
        {P} met {Q} at the {place} on {weekday}.
        {Q} was {vp.ing} when {P} came in.
        {P} called {Q} in the evening.
        After dinner, {P} went to see {Q}.)"},
      {"dialogue_question", Kind::Text, "\"{LINE}\" {ask_tag}."},
      {"dialogue_answer", Kind::Text, R"(
        "{LINE}," {say_tag}.
        "{LINE}."
        {P} {adv_manner} said, "{LINE}.")"},
      {"plan_open", Kind::Text, R"(
        This is {P}'s plan for the week.
        {P} has a busy week ahead.
        {P} wrote down {P.his} plans for the week.
        Here is what {P} will do next week.)"},
      {"plan_day", Kind::Text, R"(
        {P} will {vp}
        {P} is going to {vp}
        {P} has to {vp} in the morning and {vp} in the afternoon
        {P} and {Q} will {vp_pair}
        {P} wants to {vp_leisure}
        {P} will meet {Q} at the {place} at {int:1-12}:{minute}
        {P} will stay at home and {vp})"},
      {"plan_recall", Kind::Text, R"(
        On {weekday} evening, {P} read {P.his} plan again:
        {Q} asked about the week, so {P} read the plan:
        Before going to bed, {P} read the plan one more time:)"},
      {"list_item", Kind::Text, R"(
        {number_word} {fruit.pl}
        a bag of {fruit.pl}
        some {mass_food}
        a {object}
        {number_word} {vegetable.pl}
        a bottle of {cold_drink}
        a box of {dish.pl}
        a loaf of bread
        a jar of honey
        {number_word} {object.pl}
        a {adj_food} {dish})"},
      {"seq_word", Kind::Words,
       "{animal}, {color}, {fruit}, {object}, {place}, {number_word}, {adj_look}, {name}, {city}, "
       "{instrument},"
       "{vegetable}, {flower_kind}, {job}"},
      {"seq_intro", Kind::Text, R"(
        {P} wrote some words on the board:
        The teacher read a list of words:
        {P} said the words slowly:
        Here are the words {Q} had to remember:
        Repeat after me:
        {P} whispered the secret password:)"},
      {"seq_again", Kind::Text, R"(
        Again:
        Once more:
        {Q} repeated them:
        Then {P} said them again:
        The class said the words back:
        {Q} wrote them down:)"},
      {"pairs_intro", Kind::Text, R"(
        {P} made a plan for the day:
        The teacher said where everyone had to go:
        {P} wrote down who was going where:
        This was the plan:)"},
      {"pairs_recall", Kind::Text, R"(
        Later, {Q} read out the plan again:
        {P} checked the plan one more time:
        To be sure, {Q} repeated it:
        At lunch, {P} read the plan to everyone:)"},
      {"chant_intro", Kind::Text, R"(
        The children sang a song:
        {P} and {Q} sang as they walked to the {place}:
        Everyone at the {place} knew the chant:
        {P} sang {P.his} favorite song:)"},
      {"chant_again", Kind::Text, R"(
        Then they sang it again:
        And once more, louder:
        {Q} joined in:
        The next morning, {P} was still singing:)"},
      {"memory_intro", Kind::Text, R"(
        {P} and {Q} played the memory game on the way to the {PLACE}.
        At the {PLACE}, {P} and {Q} played a memory game.)"},
      {"message", Kind::Text, R"(
        Meet me at the {place} at {int:1-12}:{minute}, and bring the {object}
        The {animal} is in the {room}, so please keep the door closed
        I have gone to {city} to see {R}, and I will be back on {weekday}
        Do not forget to {vp} before {Q} comes home
        The key to the {container} is under the {adj_look} {object} in the {room}
        There is {mass_food} in the kitchen and a {dish} for {R}
        I found your {object} at the {place} and left it on the {furniture})"},
      {"message_intro", Kind::Text, R"(
        {Q} found a note on the {furniture}. It said:
        {P} sent {Q} a message:
        {P} read the note out loud:)"},
      {"message_again", Kind::Text, R"(
        {Q} did not believe it, so {P} read it again:
        {Q} asked {P} to read it again:
        To be sure, {Q} read it once more:)"},
      {"code_intro", Kind::Text, R"(
        The words of the old spell were:
        {P} read the labels on the boxes:
        The names of the new stars were:
        {P} made up a language. The first words were:
        The sign on the door of the {place} said:
        {Q} gave {P} the list of passwords:
        The robot said:)"},
      {"drill_open", Kind::Text, R"(
        {P} and {Q} practised the words of the new game.
        Today the class learned some strange words.
        {P} taught {Q} a secret language.
        The robot was learning to talk.
        Here are the passwords for this week.)"},
      {"code_again", Kind::Text, R"(
        {Q} read them back:
        {P} said them again, slowly:
        Later, {Q} could still say them:
        {P} wrote them in {P.his} notebook:
        Once more:
        The robot said it again:)"},
      {"digits_intro", Kind::Text, R"(
        The code for the door of the {place} was
        {P}'s new phone number is
        The numbers on the ticket were
        {Q} told {P} the secret code:)"},
      {"digits_again", Kind::Text, R"(
        {P} wrote it down:
        {Q} said it back:
        To remember it, {P} said it again:
        Once more:)"},
      {"chant", Kind::Text, "{chant_line}, {chant_line}"},
      {"list_intro", Kind::Text, R"(
        {P} wrote a shopping list:
        {P} made a list of things to buy at the {place}:
        Before going to the {place}, {P} wrote down what {P.he} needed:
        {Q} gave {P} a list:
        This is what {P} needed from the {place}:)"},
      {"list_recall", Kind::Text, R"(
        At the {place}, {P} read the list again:
        {P} checked the list one more time:
        When {P} got to the {place}, {P.he} read the list out loud:
        {Q} asked what was on the list, and {P} read it:
        On the way home, {P} repeated the list to {P.self}:)"},
  };
  return rules;
}

// ------------------------------------------------------------------------------------------------
// Alternative style: recipes, forecasts, letters, instructions, sports, stock lists, FAQs, notices,
// reviews, timetables (British spelling). Other names, places and things than the main style.
// ------------------------------------------------------------------------------------------------

const std::vector<RuleDef>& altRules() {
  static const std::vector<RuleDef> rules = {
      {"alt_city", Kind::Words,
       "Zürich, São Paulo, Lisbon, Munich, Kraków, Edinburgh, Glasgow, Copenhagen, Stockholm, Helsinki,"
       "Warsaw, Budapest, Brussels, Amsterdam, Geneva, Lyon, Porto, Seville, Bergen, Leeds, Bristol, Cardiff,"
       "Manchester, Liverpool, Montréal, Vancouver, Auckland, Wellington, Cape Town, Málaga, Reykjavík,"
       "Rotterdam, Hamburg, Salzburg, Valencia, Turin, Bologna, Belfast, Aberdeen, York, Norwich, Brighton"},
      {"surname", Kind::Words,
       "Smith, Brown, Wilson, Taylor, Clarke, Hughes, Evans, Walker, Wright, Green, Hall, Wood, Harris, "
       "Lewis,"
       "Turner, Fischer, Rossi, Jensen, Costa, Silva, Kowalski, Müller, Patel, Murphy, Kelly, Dubois,"
       "Larsen,"
       "Moreno, Ferreira, Holm, Lindqvist, Campbell, Stewart, Morgan, Price, Barnes, Fletcher, Nowak"},
      {"full_name", Kind::Text, "{alt_name} {surname}"},

      // --- recipes ---
      {"recipe_title", Kind::Text, R"(
        {alt_dish}
        Easy {alt_dish}
        {full_name}'s {alt_dish}
        Quick {alt_dish}
        Recipe: {alt_dish}
        Classic {alt_dish}
        Weeknight {alt_dish})"},
      {"recipe_intro", Kind::Text, R"(
        This is a quick and comforting dish for cold evenings.
        My grandmother made this every Sunday, and it is still a family favourite.
        A cheap and cheerful recipe that takes less than an hour.
        This freezes well, so it is worth making a double batch.
        Perfect for a lazy weekend lunch.
        You will be surprised how easy this is.)"},
      {"alt_dish", Kind::Words,
       "lentil soup, mushroom risotto, banana bread, vegetable curry, apple crumble, chickpea stew, lemon "
       "tart,"
       "spinach pie, tomato and basil pasta, roast potatoes, ginger biscuits, carrot cake, leek and potato "
       "soup,"
       "courgette fritters, cheese scones, rhubarb crumble, fish pie, Spanish omelette, flatbreads,"
       "porridge with berries, pea risotto, bread and butter pudding, shortbread, aubergine bake,"
       "sweet potato curry, onion tart, pumpkin soup, oat flapjacks, plum cake, mushroom stroganoff"},
      {"ingredient_mass", Kind::Words,
       "plain flour, self-raising flour, caster sugar, brown sugar, butter, olive oil, sunflower oil,"
       "grated cheese, ground almonds, oats, risotto rice, red lentils, breadcrumbs, cocoa powder, double "
       "cream,"
       "natural yoghurt, spinach, frozen peas, tinned tomatoes, honey, golden syrup, dried apricots, "
       "raisins"},
      {"ingredient_count", Kind::Noun,
       "egg, onion, courgette, aubergine, leek, carrot, shallot, clove|cloves of garlic, red pepper, lemon,"
       "lime, tomato|tomatoes, potato|potatoes, mushroom, stick|sticks of celery, chilli|chillies, spring "
       "onion,"
       "sweet potato|sweet potatoes, parsnip, cooking apple, ripe banana"},
      {"spice", Kind::Words, "salt, cinnamon, nutmeg, paprika, cumin, chilli flakes, turmeric, mixed spice"},
      {"herb", Kind::Words, "parsley, basil, coriander, mint, thyme, rosemary, dill, chives, sage"},
      {"liquid", Kind::Words,
       "milk, water, vegetable stock, chicken stock, double cream, coconut milk, tomato passata, white wine"},
      {"ingredient_line", Kind::Text, R"(
        {int:100-500} g {ingredient_mass}
        {int:1-4} tbsp {ingredient_mass}
        {int:1-3} tsp {spice}
        {int:2-6} {ingredient_count.pl}
        1 {ingredient_count}, finely chopped
        {int:2-4} {ingredient_count.pl}, peeled and diced
        a pinch of {spice}
        a handful of fresh {herb}
        {int:100-600} ml {liquid}
        {int:1-2} tbsp chopped {herb}
        salt and black pepper, to taste)"},
      {"alt_veg", Kind::Noun,
       "onion, courgette, aubergine, leek, carrot, shallot, red pepper, mushroom, parsnip, spring onion,"
       "sweet potato|sweet potatoes, stick|sticks of celery"},
      // Method steps come in three phases, so that a recipe reads in a sensible order.
      {"recipe_prep", Kind::Text, R"(
        Preheat the oven to {int:16-22}0°C (gas mark {int:3-7}).
        Finely chop the {alt_veg.pl} and set them aside.
        Grease a {int:18-30} cm baking tin and line it with baking paper.
        Sift the flour into a large mixing bowl.
        Peel the {alt_veg.pl} and cut them into chunks.
        Soak the {ingredient_mass} in warm water for {int:10-30} minutes.
        Weigh out all the ingredients before you begin.
        Wash the {herb} and pat it dry with kitchen paper.)"},
      {"recipe_cook", Kind::Text, R"(
        Melt the butter in a large saucepan over a medium heat.
        Add the {alt_veg.pl} and cook for {int:3-8} minutes, stirring now and then.
        Whisk the eggs with the sugar until pale and fluffy.
        Simmer gently for {int:10-40} minutes, stirring occasionally.
        Rub the butter into the flour until the mixture resembles breadcrumbs.
        Pour in the {liquid} and bring to the boil.
        Reduce the heat and cover with a lid.
        Blend until smooth, adding a little more {liquid} if it is too thick.
        Fold in the {ingredient_mass} with a metal spoon.
        Fry the {alt_veg.pl} in the olive oil until soft but not browned.
        Drain well and return to the pan.
        Knead the dough for about {int:5-10} minutes on a floured surface.
        Stir in the {spice} and cook for another minute.
        Spoon the mixture into the prepared tin and smooth the top.)"},
      {"recipe_finish", Kind::Text, R"(
        Bake for {int:20-50} minutes, or until golden brown.
        Roast for {int:25-45} minutes, turning halfway through.
        Leave to cool in the tin for {int:10-20} minutes before turning out.
        Season well with salt and pepper.
        Stir in the {herb} just before serving.
        Check the seasoning and add a squeeze of lemon juice.
        Sprinkle with {spice} and a little grated cheese.
        Divide between {small_number} warm bowls.
        Serve hot with crusty bread or a green salad.
        Garnish with fresh {herb} and serve straight away.)"},
      {"recipe_note", Kind::Text, R"(
        Tip: you can use {ingredient_mass} instead of {ingredient_mass} if you prefer.
        This keeps in the fridge for up to {small_number} days in an airtight container.
        Suitable for freezing.
        For a vegan version, replace the butter with sunflower oil.
        If you do not have fresh {herb}, a teaspoon of dried {herb} will do.
        Leftovers make an excellent packed lunch.
        Prep time: {int:10-30} minutes. Cooking time: {int:20-90} minutes.
        Best eaten on the day it is made.)"},

      // --- weather ---
      {"wx_title", Kind::Text, R"(
        Weather forecast for {CITY} and the surrounding area
        {CITY}: the week ahead
        Your local forecast: {CITY}
        Five-day forecast for {CITY})"},
      {"wx_outlook", Kind::Text, R"(
        Outlook: becoming more settled next week, with temperatures close to average for {month}.
        Outlook: unsettled, with spells of rain and strong winds at times.
        Outlook: a change to colder weather is likely by the end of the month.
        Outlook: mostly dry, with overnight frost in sheltered spots.)"},
      {"wx_condition", Kind::Words,
       "sunny spells with occasional showers, overcast with light drizzle in the afternoon, heavy rain "
       "clearing by evening,"
       " scattered thunderstorms, mostly dry and bright, frost early on then sunny, sleet and snow on higher "
       "ground,"
       " patchy fog in the morning, humid with a risk of hail, blustery with squally showers,"
       "clear skies and very mild, grey and damp, cold and breezy, long sunny periods"},
      {"wind_dir", Kind::Words, "north, north-east, east, south-east, south, south-west, west, north-west"},
      {"wx_level", Kind::Words, "low, moderate, high, very high"},
      {"wx_sentence", Kind::Text, R"(
        Temperatures will be close to average for the time of year.
        It will be a chilly start, with a touch of frost in rural areas.
        Winds from the {wind_dir} at {int:5-45} km/h, with gusts of up to {int:50-95} km/h.
        Humidity will be around {int:40-95}%.
        There is a {int:1-9}0% chance of rain.
        The UV index will be {wx_level}.
        Pollen count: {wx_level}.
        Drivers are advised to take care on untreated roads.
        Sunrise is at 0{int:5-7}:{int2:0-59} and sunset at {int:17-21}:{int2:0-59}.
        Visibility will be poor in places.
        A yellow warning for wind is in force until midnight.
        It will feel colder in the breeze.
        Any early mist will soon lift.
        The weekend looks unsettled, with further showers likely.)"},

      // --- letters ---
      {"letter_thanks_open", Kind::Text, R"(
        Thank you so much for the {gadget} you sent for my birthday.
        Thank you for a wonderful weekend in {alt_city}.
        I just wanted to say thank you for all your help with the move.)"},
      {"letter_thanks", Kind::Text, R"(
        It arrived on {weekday} and it is already in use.
        It was lovely to see you in {alt_city} last month.
        The children still talk about the trip to the seaside.
        Please thank your {kin} for the delicious {alt_dish}.
        I hope the journey home was not too tiring.
        We must do it again before the summer is over.
        I have put the photographs in an album, and I will send you copies.)"},
      {"letter_complaint_open", Kind::Text, R"(
        I am writing to complain about a {gadget} I bought from your shop on {int:1-28} {month}.
        I am writing about the poor service I received at your branch in {alt_city}.
        I wish to complain about the delivery of my order last {weekday}.)"},
      {"letter_complaint", Kind::Text, R"(
        After only {small_number} weeks, the {gadget_part} stopped working.
        I returned it to the branch in {alt_city}, but the staff were unable to help.
        I enclose a copy of the receipt and the guarantee.
        I would be grateful if you could arrange a refund or a replacement.
        I have been a loyal customer for {int:3-20} years and I am very disappointed.
        Please reply within fourteen days.
        Your order reference was {int:100000-999999}.
        I tried to telephone your customer service line, but nobody answered.)"},
      {"letter_invite_open", Kind::Text, R"(
        We would be delighted if you could join us for {event} on {weekday} {int:1-28} {month}.
        I am writing to invite you to {event} at our flat in {alt_city}.
        We are having {event} next month, and we would love you to come.)"},
      {"letter_invite", Kind::Text, R"(
        It starts at {int:2-8} pm.
        There will be plenty of food, so please do not bring anything.
        Let me know by the end of the month whether you can come.
        If you are coming by train, we can pick you up from the station.
        The address is {int:1-200} {alt_street}, {alt_city}.
        Dress code: smart casual.
        It would not be the same without you.)"},
      {"letter_news_open", Kind::Text, R"(
        I have some news: I have started a new job at a {workplace} in {alt_city}.
        I am sorry it has taken me so long to write.
        It has been ages since I last wrote, so here is all the news.)"},
      {"letter_news", Kind::Text, R"(
        The flat is small but the neighbours are friendly.
        The weather here has been dreadful, so I have mostly stayed indoors.
        My {kin} has taken up {alt_hobby} and talks about nothing else.
        We finally repainted the kitchen; it is now a pale shade of {colour}.
        I am learning {alt_hobby} on {weekday} evenings, and I am hopeless at it.
        The allotment is doing well this year, apart from the slugs.
        We are thinking of spending the holidays in {alt_city}.
        Work is busy, but I am enjoying it.
        The car broke down again last week, so I have been cycling everywhere.)"},
      {"letter_enquiry_open", Kind::Text, R"(
        I am writing to enquire about renting a room at your {workplace} for a meeting.
        I saw your advertisement in the {alt_city} Gazette and I would like some more information.
        I would be grateful if you could send me details of your prices for next season.)"},
      {"letter_enquiry", Kind::Text, R"(
        Could you tell me whether there is step-free access to the building?
        We would need the room from {int:9-11} am until {int:2-5} pm on {weekday} {int:1-28} {month}.
        There would be about {int:12-60} people in our group.
        Please could you also let me know whether a deposit is required.
        I would prefer to pay by bank transfer.
        My telephone number is 0{int:1000-1999} {int:100000-999999}, and I am usually available after 5 pm.
        I enclose a stamped addressed envelope for your reply.)"},
      {"letter_address", Kind::Text, "{int:1-200} {alt_street}\\n{alt_city}\\n{int:1-28} {month} {year}"},
      {"letter_greeting", Kind::Text, "Dear {Q},\nHi {Q},\nDearest {Q},"},
      {"letter_close", Kind::Text, R"(
        I look forward to hearing from you.
        Please write back soon.
        Give my regards to your family.
        Do let me know if there is anything I can do.
        Thank you for your time.
        Take care of yourself.)"},
      {"signoff_formal", Kind::Words, "Yours sincerely, Yours faithfully, Kind regards"},
      {"signoff_informal", Kind::Words,
       "Best wishes, With love, Warm regards, All the best, Love, See you soon"},
      {"kin", Kind::Words,
       "mother, father, sister, brother, husband, wife, grandson, granddaughter, flatmate"},
      {"event", Kind::Words,
       "a small dinner party, our wedding anniversary, a garden party, a barbecue, a surprise party,"
       "a house-warming party, a quiz night"},
      {"alt_street", Kind::Text, "{alt_street_name} {alt_street_kind}"},
      {"alt_street_name", Kind::Words,
       "Victoria, Albert, Queen's, King's, Mill, Station, Church, Castle, Abbey, Chapel,"
       "Harbour, Orchard, Meadow, Willow"},
      {"alt_street_kind", Kind::Words, "Road, Street, Crescent, Close, Terrace, Gardens, Way"},
      {"colour", Kind::Words, "grey, blue, green, yellow, turquoise, lilac, cream, sage green, terracotta"},
      {"alt_hobby", Kind::Words,
       "pottery, rock climbing, salsa dancing, birdwatching, the cello, Portuguese,"
       "photography, cycling, bridge, woodwork"},
      {"workplace", Kind::Words,
       "bookshop, design studio, dental practice, bank, software company, solicitor's office,"
       "veterinary clinic, hotel"},

      // --- instructions ---
      {"howto_task", Kind::Words,
       "fix a dripping tap, change a bicycle tyre, hang a mirror, paint a garden fence, unblock a sink,"
       "put up a shelf, repot a houseplant, descale a kettle, sharpen a kitchen knife, wallpaper a room,"
       "assemble a flat-pack wardrobe, bleed a radiator, clean a laptop keyboard, fix a squeaky door,"
       "replace a bicycle chain, seal a draughty window"},
      {"tool", Kind::Words,
       "screwdriver, spanner, hammer, cordless drill, tape measure, spirit level, utility knife, paintbrush,"
       "pair of pliers, hacksaw, stepladder, bucket, sponge, soft cloth, torch, tyre lever, Allen key, wire "
       "brush"},
      {"fixing", Kind::Noun, "screw, bolt, nail, hinge, bracket, washer, wall plug, nut"},
      {"material", Kind::Words,
       "varnish, primer, wood glue, silicone sealant, masking tape, filler, grout, oil"},
      {"howto_intro", Kind::Text, R"(
        This job takes about {int:20-90} minutes and needs no special skills.
        It is easier than it looks, and it will save you the cost of a tradesman.
        Before you start, read all the steps and make sure you have everything to hand.
        Most people can do this in an afternoon.
        Ask someone to help you if the parts are heavy.)"},
      {"howto_prepare", Kind::Text, R"(
        Switch off the power at the mains.
        Turn off the water supply.
        Lay an old sheet on the floor to protect it.
        Measure the gap with a tape measure and write down the figure.
        Clear the area and make sure you have plenty of light.
        Read the manufacturer's instructions, if you still have them.)"},
      {"howto_work", Kind::Text, R"(
        Use the {tool} to loosen the {fixing.pl}.
        Mark the position with a pencil, using the spirit level to keep it straight.
        Remove the old part and take it with you to the hardware shop.
        Drill a hole about {int:5-8} mm wide and {int:30-60} mm deep.
        Push a wall plug into each hole and tap it flush with the hammer.
        Fit the new part, making sure it faces the right way.
        Sand the surface until it is smooth, then wipe away the dust.
        Apply a thin coat of {material} and let it dry for {int:1-4} hours.
        Tighten the {fixing.pl} with the {tool}, but do not overtighten them.
        Keep the {fixing.pl} in a saucer so that none of them get lost.)"},
      {"howto_finish", Kind::Text, R"(
        Put everything back together in the reverse order.
        Check that everything is level.
        Wipe away any excess with a damp cloth.
        Turn the power back on and test it.
        Leave it overnight before using it.
        If it still does not work, repeat the last {small_number} steps.
        Tidy up and put your tools away.)"},
      {"howto_tip", Kind::Text, R"(
        Tip: take a photo with your phone before you take anything apart.
        Warning: never work on electrics with wet hands.
        Tip: a little washing-up liquid makes the job much easier.
        Note: wear gloves and safety glasses throughout.
        Tip: if a {fixing} is stuck, a drop of oil will help.
        Warning: keep children and pets out of the room until the {material} is dry.)"},

      // --- sports (X beat Y by the score W; Z is a player) ---
      {"team", Kind::Text, "{alt_city} {team_suffix}"},
      {"results_title", Kind::Text,
       "Results, Saturday {int:1-28} {month}\nResults, Sunday {int:1-28} {month}\nLeague results: round "
       "{int:2-30}"},
      {"team_suffix", Kind::Words,
       "United, Rovers, City, Athletic, Wanderers, Rangers, Town, Albion, Harriers"},
      {"sport_win_open", Kind::Text, R"(
        {X} beat {Y} {W} on {weekday} evening.
        {X} were too strong for {Y} and won {W}.
        A late goal gave {X} a {W} win over {Y}.)"},
      {"sport_win", Kind::Text, R"(
        {Z} opened the scoring after {int:3-40} minutes with a header from a corner.
        {Y} had a goal disallowed shortly before half-time.
        The referee showed {small_number} yellow cards in a bad-tempered second half.
        A crowd of {int:2-40},{int3:0-999} watched the match.
        The win keeps {X} in the promotion race.
        The manager of {X} praised the defence after the final whistle.
        {Y} have now lost {small_number} matches in a row.
        {Z} was substituted in the second half with a knee injury.
        The {Y} goalkeeper made several fine saves to keep the score respectable.
        Next {weekday}, {X} travel to {alt_city}.
        {Z} added a second from the penalty spot.
        {Y} hit the crossbar twice but could not find a way through.
        It was their third win in a row.)"},
      {"sport_draw_open", Kind::Text, R"(
        {X} and {Y} drew {W} in a tense match on {weekday}.
        {X} were held to a {W} draw by {Y}.)"},
      {"sport_draw", Kind::Text, R"(
        The visitors took the lead against the run of play.
        {Z} hit the post in the last minute.
        The home fans booed at half-time.
        Neither side created many chances in the first half.
        {Z} was sent off ten minutes from time.
        Both managers said that a draw was a fair result.
        The point does little to help either side in the table.
        Heavy rain made the pitch difficult throughout.)"},

      // --- stock lists ---
      {"stock_item", Kind::Words,
       "screwdriver set, claw hammer, adjustable spanner, cordless drill, extension lead, light bulb (LED),"
       "AA batteries (pack of 4), tape measure, padlock, paint roller, sandpaper (sheet), mop, broom,"
       "work gloves (pair), safety helmet, torch, electric kettle, toaster, printer paper (ream), stapler,"
       "ring binder, envelopes (box of 50), notebook, cable ties (bag), bin bags (roll), hand soap, kitchen "
       "roll,"
       "wood screws (box), wall plugs (bag), white paint (2.5 L tin), dust sheet, spirit level, hacksaw "
       "blade"},
      {"stock_title", Kind::Text,
       "Stock list, {alt_city} branch, {month} 20{int2:10-24}\nInventory: {alt_city} warehouse"},
      {"stock_rest", Kind::Text,
       "| {int:0-250} | Aisle {int:1-12}, shelf {int:1-6} | £{int:1-89}.{int2:0-99}"},
      {"stock_note", Kind::Text, R"(
        Items with fewer than 10 in stock must be reordered by {weekday}.
        Prices include VAT.
        Please report any damaged stock to the warehouse manager, {full_name}.
        The next delivery from the supplier in {alt_city} is expected on {int:1-28} {month}.
        Stocktake completed by {full_name} on {int:1-28} {month} {year}.
        Discontinued lines are marked with an asterisk.)"},

      // --- FAQ (X is a venue or service) ---
      {"venue", Kind::Words,
       "leisure centre, community library, garden centre, dental surgery, swimming baths, climbing wall,"
       "bicycle workshop, repair café, car park, art gallery, language school, veterinary practice"},
      {"faq_pair", Kind::Text, R"(
        Q: When are you open?\nA: The {X} is open from {int:7-10} am to {int:5-9} pm, Monday to Saturday.
        Q: Can I return an item?\nA: Yes, within {int:14-30} days of purchase, provided you have the receipt.
        Q: Is there parking nearby?\nA: There is a pay-and-display car park behind the {X}.
        Q: Are there discounts?\nA: Yes, students and pensioners get {int:1-3}0% off with a valid card.
        Q: How do I cancel my membership?\nA: Send an email to the office at least {int:2-4} weeks in advance.
        Q: Are dogs allowed?\nA: Only assistance dogs are allowed inside the {X}.
        Q: Is the {X} accessible for wheelchair users?\nA: Yes, there is step-free access from {alt_street}.
        Q: Can I book online?\nA: Bookings can be made online or by telephone up to {int:2-8} weeks ahead.
        Q: What happens if I am late?\nA: We will hold your booking for {int:10-20} minutes.
        Q: Do you sell gift vouchers?\nA: Yes, in amounts from £10 to £{int:5-20}0.
        Q: Where is the {X}?\nA: It is on {alt_street}, a short walk from the bus station in {alt_city}.
        Q: What does it cost?\nA: A visit costs £{int:3-15}.{int2:0-99}; a monthly pass costs £{int:25-60}.
        Q: Is there a café?\nA: There is a small café on the ground floor serving {alt_dish} and hot drinks.
        Q: Can children come on their own?\nA: Children under {int:12-16} must be accompanied by an adult.
        Q: Who should I contact with a complaint?\nA: Please write to the manager, {full_name}.)"},

      // --- notices and local news ---
      {"notice_title", Kind::Text, R"(
        Notice to residents
        News from {alt_city}
        {X} to close for repairs
        Community update: the {X}
        Public notice)"},
      {"notice_sentence", Kind::Text, R"(
        The {X} on {alt_street} will be closed from {weekday} {int:1-28} {month} for refurbishment.
        The council in {alt_city} has announced that the {X} will reopen in the spring.
        Residents are asked to park considerately while the work is carried out.
        A spokesperson for the council said the repairs would cost around £{int:20-900},000.
        Volunteers are needed to help with the annual clean-up on {weekday}.
        Bins will be collected one day later than usual during the holiday period.
        A public meeting will be held in the town hall at {int:6-8} pm on {weekday}.
        The {X} has received a grant of £{int:5-95},000 from a local trust.
        Temporary traffic lights will be in place on {alt_street} for {small_number} weeks.
        For more information, contact {full_name} on 0{int:1000-1999} {int:100000-999999}.
        Opening hours during the works will be posted on the noticeboard.
        The mayor, {full_name}, thanked everyone who had taken part in the consultation.
        Local shops have reported a drop in trade since the closure.
        The new cycle lane between {alt_street} and the railway station is now open.)"},

      // --- product reviews (X is the product) ---
      {"gadget", Kind::Words,
       "kettle, toaster, blender, hairdryer, vacuum cleaner, pair of headphones, e-reader, coffee grinder,"
       "rucksack, pair of walking boots, tent, desk lamp, printer, electric toothbrush, food processor,"
       "slow cooker, sewing machine, bread maker"},
      {"gadget_part", Kind::Words, "switch, handle, lid, battery, cable, zip, hinge, display, motor"},
      {"review_sentence", Kind::Text, R"(
        The build quality is {quality}.
        The battery lasts about {int:3-12} hours between charges.
        Delivery was quick and the packaging was fully recyclable.
        However, the {gadget_part} feels rather flimsy.
        It is noisier than my old one, but much faster.
        The instructions were confusing, so I watched a video online instead.
        For the price, I cannot complain.
        My {kin} liked it so much that we ordered a second one.
        After {small_number} weeks the {gadget_part} came loose, which was disappointing.
        Customer service replaced it without any fuss.
        It is lighter than it looks, which is a bonus.
        I would not recommend it for heavy use.
        It does exactly what it says on the box.
        The colour is slightly different from the photos.
        Overall, a solid purchase.)"},
      {"quality", Kind::Words, "excellent, decent, poor, better than expected, average, superb"},
      {"review_byline", Kind::Text, "Reviewed by {full_name}, {alt_city}\nVerified purchase, {full_name}"},
      {"recipe_serves", Kind::Text,
       "Serves {int:2-8}.\nMakes {int:8-24} pieces.\nServes {int:2-6} as a main course."},
      // Review titles by rating: 1-2, 3, 4-5 stars.
      {"review_title_bad", Kind::Words, "Not worth the money, Disappointing, Stopped working after a month"},
      {"review_title_mixed", Kind::Words, "Does the job, Good but noisy, Fine for the price"},
      {"review_title_good", Kind::Words,
       "Excellent value, Better than my last one, Brilliant little machine, Would buy again"},
      {"review_open", Kind::Text, R"(
        I bought this {X} {int:2-11} months ago and I use it every day.
        I needed a new {X} after my old one broke.
        This is the second {X} I have owned from this brand.
        I was given this {X} as a present last {month}.)"},

      // --- timetables ---
      {"timetable_title", Kind::Text, R"(
        Bus {int:1-99}: {alt_city} city centre to {suburb}
        Route {int:1-99}: {suburb} to the railway station
        Night bus N{int:1-30}: {suburb} to {alt_city} centre)"},
      {"suburb", Kind::Words,
       "Northfield, Westbrook, Eastgate, Hillside, Riverside, Oakwood, the hospital, the university, the "
       "airport,"
       "the harbour, Old Town, Kingsmead, Ashford Green, Brookfield"},
      {"timetable_note", Kind::Text, R"(
        No service on public holidays.
        Times may vary during roadworks on {alt_street}.
        All services are wheelchair accessible.
        Tickets can be bought from the driver or with a contactless card.
        The last service on {weekday.pl} leaves {int:10-30} minutes earlier.
        Please allow extra time for connections in {alt_city}.)"},
  };
  return rules;
}

std::string ioiRuleBody() {
  std::string body;
  for (const std::string& frame : frames()) body += frame + " {IO}.\n";
  return body;
}

}  // namespace

const Grammar& mainGrammar() {
  static const std::vector<RuleDef> lists = {
      {"place", Kind::Noun, joinWords(placeWords())},
      {"object", Kind::Noun, joinWords(objectWords())},
      {"name", Kind::Words, joinWords(mainFemaleNames()) + joinWords(mainMaleNames())},
      {"ioi", Kind::Text, ioiRuleBody()},
  };
  static const Grammar grammar({commonRules(), mainRules(), lists});
  return grammar;
}

const Grammar& altGrammar() {
  static const std::vector<RuleDef> lists = {
      {"alt_name", Kind::Words, joinWords(altFemaleNames()) + joinWords(altMaleNames())},
  };
  static const Grammar grammar({commonRules(), altRules(), lists});
  return grammar;
}

}  // namespace nf::corpus
