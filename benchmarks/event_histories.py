"""Synthetic multi-session histories with questions about two events in time (written for
benchmark_event_pairs.py; our own made-up data, not a published set).

Each user's history is a run of conversations (sessions) on different days, every turn a
plain user message with no date in it. A few conversations tell a life event ("We adopted a
rescue beagle ...") beside two turns on the same topic; four later turns come back to the
topic without telling the event ("Biscuit finally learned to sit ..."), and the rest are
everyday requests (recipes, explanations, errands), some of them near misses (someone
else's dog, someone else's wedding). The questions ask about the order of two of a user's
events or the time between them, in several phrasings, naming each event in other words
than the conversation did ("adopting my dog"); the answer needs the conversations where
each was told. A control question per event asks about one event only and must not change.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# (told, two turns beside it, four later turns on the topic, gerund, past, base)
EVENTS = [
    ("We adopted a rescue beagle from the shelter today and named him Biscuit.",
     ("What should I buy for a beagle puppy's first week at home?",
      "Biscuit cried in his crate most of the night."),
     ("Biscuit finally learned to sit and stay at the park.",
      "How often should a beagle go to the vet for checkups?",
      "Biscuit pulls on the lead so hard on walks.",
      "Is it okay to give Biscuit peanut butter as a treat?"),
     "adopting my dog", "adopted my dog", "adopt my dog"),
    ("I signed up for a six-week pottery course at the community arts centre.",
     ("My first bowl on the wheel came out completely lopsided.",
      "Is stoneware clay better for beginners than porcelain?"),
     ("I glazed three mugs in blue this week and they look great.",
      "The kiln at the arts centre is booked until next month.",
      "I want to try making a teapot on the wheel.",
      "My clay keeps cracking as it dries, why?"),
     "starting the pottery class", "started the pottery class", "start the pottery class"),
    ("I ran the city half marathon this morning and finished in just under two hours.",
     ("My calves are so sore after the race, any stretches?",
      "The crowd at mile ten really kept me going."),
     ("I'm thinking about training for a full marathon next year.",
      "Which running shoes are good for long distances?",
      "I did an easy ten kilometre run along the canal.",
      "How do I avoid shin splints when running more?"),
     "running the half marathon", "ran the half marathon", "run the half marathon"),
    ("Today was my first day as a data analyst at the logistics company.",
     ("My manager walked me through the quarterly dashboards.",
      "How do I make a good impression in my first month at work?"),
     ("The logistics team asked me to automate their weekly report.",
      "I finally got access to the warehouse database.",
      "My commute to the logistics office takes forty minutes.",
      "How do I ask my manager for feedback on my reports?"),
     "starting my new job", "started my new job", "start my new job"),
    ("We finished moving into the new apartment on Elm Street today.",
     ("Half the moving boxes are still unopened in the living room.",
      "How do I set up internet in a new apartment quickly?"),
     ("The neighbours on Elm Street invited us for dinner.",
      "Our radiator makes a loud knocking noise at night.",
      "I'm looking for a rug for the apartment's living room.",
      "The kitchen in the new place has hardly any cupboards."),
     "moving into the new apartment", "moved into the new apartment",
     "move into the new apartment"),
    ("I bought a used silver Prius from a dealer downtown.",
     ("How often should I change the oil on a hybrid?",
      "The dealer threw in a free set of floor mats."),
     ("The Prius gets amazing mileage on my commute.",
      "I need to renew the insurance on the Prius soon.",
      "The Prius needs new tyres before winter.",
      "Where can I get the car washed cheaply?"),
     "buying the car", "bought the car", "buy the car"),
    ("We went to my cousin Lena's wedding at the vineyard, it was beautiful.",
     ("The band played until midnight and everyone danced.",
      "Lena's dress was her grandmother's, restored."),
     ("Lena sent us the photos from the vineyard today.",
      "Lena and her husband are honeymooning in Portugal.",
      "I still have the vineyard's wine we got as a favour.",
      "Lena asked for advice on writing thank-you cards."),
     "going to my cousin's wedding", "went to my cousin's wedding",
     "go to my cousin's wedding"),
    ("I had surgery this morning to repair the torn meniscus in my knee.",
     ("The nurse said to keep my leg elevated for two days.",
      "What foods help recovery after an operation?"),
     ("Physiotherapy for my knee is going slowly but steadily.",
      "I can finally walk without crutches.",
      "My knee still swells after climbing stairs.",
      "Which exercises strengthen the muscles around the knee?"),
     "having knee surgery", "had knee surgery", "have knee surgery"),
    ("We just landed back home after ten days in Japan.",
     ("The ramen in Osaka was the best I've ever had.",
      "How do I get over jet lag quickly?"),
     ("I'm putting together a photo album from Kyoto.",
      "My friend wants recommendations for hotels in Tokyo.",
      "I miss the convenience stores in Japan so much.",
      "How do I make Japanese-style curry at home?"),
     "coming back from Japan", "came back from Japan", "come back from Japan"),
    ("I bought my first acoustic guitar and booked weekly lessons with a teacher.",
     ("My fingertips hurt after practising chords.",
      "What are easy songs for a beginner guitarist?"),
     ("I can play the G to C chord change smoothly now.",
      "My guitar teacher suggested a new strumming pattern.",
      "Should I switch to lighter strings on my guitar?",
      "I learned my first full song on the guitar."),
     "starting guitar lessons", "started guitar lessons", "start guitar lessons"),
    ("My boss told me today that I'm the new team lead.",
     ("I'm nervous about managing people who used to be my peers.",
      "Any books for someone leading a team for the first time?"),
     ("My first team retrospective went well.",
      "One of my reports asked for more remote days.",
      "How do I run better one-to-one meetings with my team?",
      "Leading the team leaves me little time for my own tasks."),
     "getting promoted", "got promoted", "get promoted"),
    ("I planted tomato and basil seedlings in the raised beds in the backyard.",
     ("How often should I water tomato seedlings?",
      "The soil in the raised bed seems quite sandy."),
     ("The first tomatoes are turning red.",
      "Slugs have been eating my basil leaves.",
      "Should I prune the side shoots of my tomato plants?",
      "The backyard beds need more compost next season."),
     "planting the tomatoes", "planted the tomatoes", "plant the tomatoes"),
    ("We saw Coldplay live at the stadium, the light show was incredible.",
     ("My ears are still ringing from the speakers.",
      "They played Yellow as the encore."),
     ("I keep listening to the Coldplay live album since the show.",
      "Tickets for their next tour go on sale in spring.",
      "I bought the band's T-shirt at the stadium.",
      "Which other bands sound like Coldplay?"),
     "going to the Coldplay concert", "went to the Coldplay concert",
     "go to the Coldplay concert"),
    ("I volunteered at the food bank for the first time, sorting donations all afternoon.",
     ("They need more people on Saturday mornings.",
      "What items do food banks need most?"),
     ("The food bank asked me to help coordinate the holiday drive.",
      "I recruited two friends to sort donations with me.",
      "How do food banks keep fresh produce from spoiling?",
      "I'm thinking of doing a charity run for the food bank."),
     "volunteering at the food bank", "volunteered at the food bank",
     "volunteer at the food bank"),
    ("I took a Thai cooking class and learned to make green curry from scratch.",
     ("Where can I buy fresh galangal and lemongrass?",
      "The chef said to fry the curry paste until it smells fragrant."),
     ("I made the green curry again for my parents and they loved it.",
      "My curry paste keeps coming out too watery.",
      "Can I freeze homemade green curry paste?",
      "I want to try making pad thai next."),
     "taking the Thai cooking class", "took the Thai cooking class",
     "take the Thai cooking class"),
    ("I sold my old road bike to a student through an online listing.",
     ("Should I have asked for more money for a carbon frame?",
      "I cleaned the chain and pumped the tyres before the buyer came."),
     ("The garage feels so empty without the bike.",
      "I might get a folding bike for the commute instead.",
      "Cycling clubs still email me about weekend rides.",
      "How much is a good folding bike?"),
     "selling my road bike", "sold my road bike", "sell my road bike"),
    ("I passed my driving test on the second attempt!",
     ("The examiner said my parallel parking was perfect this time.",
      "Now I need to find affordable insurance for a new driver."),
     ("I drove on the motorway alone for the first time.",
      "Should I take an advanced driving course?",
      "I'm saving up to buy my own car now.",
      "Driving at night still makes me nervous."),
     "passing my driving test", "passed my driving test", "pass my driving test"),
    ("I joined a book club at the library, we're reading a mystery novel this month.",
     ("The club meets every second Thursday evening.",
      "Can you suggest discussion questions for a mystery novel?"),
     ("Our book club picked a science fiction novel next.",
      "I'm hosting the book club meeting at my place.",
      "What snacks go well with a book club evening?",
      "I'm behind on this month's book club novel."),
     "joining the book club", "joined the book club", "join the book club"),
]

_DISHES = ["soup", "salad", "pasta", "curry", "stir-fry", "casserole", "omelette", "wrap"]
_INGREDIENTS = ["spinach", "chickpeas", "mushrooms", "lentils", "salmon", "tofu",
                "sweet potato", "zucchini", "feta", "black beans"]
_CONCEPTS = ["compound interest", "vaccines", "photosynthesis", "inflation", "GPS",
             "noise-cancelling headphones", "credit scores", "solar panels", "jet streams",
             "public-key encryption", "index funds", "tides"]
_THINGS = [("dripping tap", "keeps dripping"), ("wifi router", "drops the connection"),
           ("dishwasher", "leaves spots on the glasses"), ("printer", "jams every page"),
           ("phone", "overheats while charging"), ("zip on my jacket", "keeps splitting")]
_EMAILS = ["the broken heating", "a late rent payment", "renewing the lease",
           "a noisy neighbour", "a leaking window"]
_CITIES = ["Lisbon", "Prague", "Vienna", "Montreal", "Seville", "Krakow", "Edinburgh",
           "Dublin", "Porto", "Budapest"]
_FOODS = ["an avocado", "a bagel", "a banana", "a bowl of porridge", "a slice of pizza",
          "a glass of orange juice", "a croissant", "a handful of almonds", "a boiled egg",
          "a cup of rice"]
_PARTS = ["legs", "core", "back", "arms", "shoulders"]
_PHRASES = ["where is the train station", "thank you very much", "how much does this cost",
            "I am allergic to nuts", "could we have the bill", "nice to meet you",
            "I would like a coffee", "see you tomorrow"]
_LANGUAGES = ["French", "Spanish", "German", "Italian", "Portuguese", "Dutch"]
_TOPICS = ["renting versus buying a home", "electric scooters", "a four-day work week",
           "standing desks", "learning two languages at once", "open-plan offices",
           "meal prepping", "buying refurbished phones", "smart thermostats",
           "paper notebooks", "cold showers", "audiobooks", "coworking spaces",
           "gap years", "wearable fitness trackers"]
_COOK = [("boil", "an egg"), ("roast", "a chicken"), ("bake", "a potato"),
         ("steam", "broccoli"), ("grill", "a steak"), ("simmer", "a beef stew"),
         ("poach", "salmon"), ("toast", "pine nuts")]
_RELATIONS = ["aunt", "grandfather", "best friend", "boss", "neighbour", "nephew",
              "old teacher", "godmother"]
_STORE = ["fresh herbs", "bread", "cheese", "avocados", "coffee beans", "berries",
          "cooked rice", "onions", "leftover soup", "nuts"]
_SKILLS = ["chess", "sign language", "calligraphy", "touch typing", "juggling", "knitting",
           "photography", "spreadsheet macros", "bird watching", "sourdough baking",
           "public speaking", "sketching"]
_GENRES = ["mystery", "history", "science fiction", "biography", "travel", "fantasy"]
NEAR_MISSES = [
    "My neighbour's dog barks all night long.", "My brother is planning his wedding for spring.",
    "A colleague just got back from a trip to Italy.", "My friend is selling her old car.",
    "My mum wants to start a vegetable garden.", "My coworker is training for a triathlon.",
    "My sister is thinking about learning the piano.", "My flatmate changed jobs recently.",
    "Our team is hiring a new analyst.", "My dad had a check-up at the clinic.",
]


def filler_pool(rng: random.Random) -> list[str]:
    """Everyday requests, each distinct, shuffled."""
    pool = [f"Can you suggest a {d} recipe that uses {i}?" for d in _DISHES for i in _INGREDIENTS]
    pool += [f"Explain how {c} works in simple terms." for c in _CONCEPTS]
    pool += [f"How do I fix a {t} that {p}?" for t, p in _THINGS]
    pool += [f"Write a short email to my landlord about {e}." for e in _EMAILS]
    pool += [f"Recommend a {g} book for a long train ride." for g in _GENRES]
    pool += [f"Plan a {n}-day itinerary for {c}." for n in (2, 3, 4) for c in _CITIES]
    pool += [f"How many calories are in {f}?" for f in _FOODS]
    pool += [f"Give me a {n}-minute workout for my {p}." for n in (10, 15, 20, 30)
             for p in _PARTS]
    pool += [f"Translate '{p}' into {lang}." for p in _PHRASES for lang in _LANGUAGES]
    pool += [f"Summarise the pros and cons of {t}." for t in _TOPICS]
    pool += [f"How long should I {v} {f} for?" for v, f in _COOK]
    pool += [f"Help me write a birthday message for my {r}." for r in _RELATIONS]
    pool += [f"What's the best way to store {f}?" for f in _STORE]
    pool += [f"Is it worth learning {k} in my free time?" for k in _SKILLS]
    rng.shuffle(pool)
    return pool


# Order and elapsed-time questions; a and b are EVENTS rows (gerund 4, past 5, base 6).
TEMPLATES = [
    "Which happened first, {a4} or {b4}?",
    "How many days passed between the day I {a5} and the day I {b5}?",
    "Did I {a6} before or after {b4}?",
    "How many weeks after {a4} did I {b6}?",
    "{A4} or {b4}: which came first?",
    "How many days had passed since I {a5} when I {b5}?",
    "Which did I do first, {a6} or {b6}?",
    "How much time passed between {a4} and {b4}?",
]
CONTROL = "What do you remember about when I {a5}?"


@dataclass(frozen=True)
class Conversation:
    when: datetime
    turns: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    text: str
    sessions: tuple[int, ...]  # the conversations (indexes) that hold the answer
    paired: bool  # False: a control question about one event
    told: tuple[str, ...]  # the turns that tell the event(s)


@dataclass(frozen=True)
class History:
    user: str
    conversations: tuple[Conversation, ...]
    questions: tuple[Question, ...]


def fill(template: str, a: tuple, b: tuple) -> str:
    return template.format(a4=a[3], a5=a[4], a6=a[5], b4=b[3], b5=b[4], b6=b[5],
                           A4=a[3][0].upper() + a[3][1:])


def history(user: int, rng: random.Random, sessions: int = 50, events: int = 4,
            filler: tuple[int, int] = (3, 7)) -> History:
    """One user's conversations (a few days apart) and questions about their events."""
    start = datetime(2024, 1, 8, 9, 0, tzinfo=UTC) + timedelta(days=rng.randrange(60))
    dates, day = [], start
    for _ in range(sessions):
        dates.append(day + timedelta(minutes=rng.randrange(600)))
        day += timedelta(days=rng.randint(2, 9))
    turns: list[list[str]] = [[] for _ in range(sessions)]
    picked = rng.sample(range(len(EVENTS)), events)
    told_in = sorted(rng.sample(range(sessions - 3), events))
    rng.shuffle(told_in)
    for event, at in zip(picked, told_in, strict=True):
        told, beside, later = EVENTS[event][:3]
        turns[at] += [beside[0], told, beside[1]]
        for follow in later:
            turns[rng.randrange(at + 1, sessions)].append(follow)
    pool = filler_pool(rng)
    for index in range(sessions):
        for _ in range(rng.randint(*filler)):
            if pool:
                turns[index].append(pool.pop())
        if rng.random() < 0.3:
            turns[index].append(rng.choice(NEAR_MISSES))
    conversations = tuple(Conversation(d, tuple(dict.fromkeys(t)))
                          for d, t in zip(dates, turns, strict=True))
    questions: list[Question] = []
    templates = rng.sample(TEMPLATES, events // 2 * 2)
    for pair in range(events // 2):
        i, j = 2 * pair, 2 * pair + 1
        a, b = EVENTS[picked[i]], EVENTS[picked[j]]
        for template in templates[2 * pair : 2 * pair + 2]:
            questions.append(Question(fill(template, a, b), (told_in[i], told_in[j]), True,
                                      (a[0], b[0])))
    for event, at in zip(picked, told_in, strict=True):
        questions.append(Question(fill(CONTROL, EVENTS[event], EVENTS[event]), (at,), False,
                                  (EVENTS[event][0],)))
    return History(f"user-{user:03d}", conversations, tuple(questions))


def histories(users: int, seed: int = 7, sessions: int = 50) -> list[History]:
    rng = random.Random(seed)
    return [history(u, rng, sessions) for u in range(users)]
