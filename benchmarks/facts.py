"""Planted facts and paraphrased questions for benchmark_accuracy (all deterministic).

Plain: hand-written facts about a user and their project, asked in other words. Hard: a grid
of people x attributes; each attribute has a statement template, question templates that
avoid the statement's key words where English allows, a pool of values, and (for attributes
that change over a life) the wording of an update. Names never occur in the filler of
`synthetic.py`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FIRST = (
    "Priya Mateo Ingrid Tomasz Aiko Olusegun Freya Dmitri Leilani Rashid Siobhan Kwame Yelena "
    "Bartholomew Noor Caspian Marisol Henrik Zainab Lorenzo Astrid Emeka Valentina Soren Imani "
    "Joaquin Mirela Tariq Elodie Anselm"
).split()
LAST = (
    "Okafor Lindqvist Nakamura Kowalczyk Castellanos Haddad Brennan Volkov Achterberg Moreau "
    "Szabo Oyelaran Delacroix Halvorsen Quispe Ferreira"
).split()


@dataclass(frozen=True)
class Attribute:
    key: str
    statement: str  # "{n}" = the person, "{v}" = the value
    questions: tuple[str, ...]
    values: tuple[str, ...]
    update: str | None = None  # wording of a changed value, for update_memory


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        "allergy", "{n} is allergic to {v}.",
        ("Which food should {n} never eat?", "What ingredient makes {n} ill?"),
        ("peanuts", "shellfish", "sesame", "kiwi fruit", "gluten", "strawberries", "eggs",
         "soy"),
    ),
    Attribute(
        "city", "{n} lives in {v}.",
        ("In which town is {n}'s home?", "Where does {n} reside these days?"),
        ("Lisbon", "Tallinn", "Porto", "Ghent", "Leipzig", "Bergen", "Krakow", "Valencia",
         "Trieste", "Aarhus"),
        "{n} moved and now lives in {v}.",
    ),
    Attribute(
        "job", "{n} works as a {v}.",
        ("What does {n} do for a living?", "What is {n}'s occupation?"),
        ("pediatric nurse", "tax accountant", "marine biologist", "bus driver", "pastry chef",
         "patent lawyer", "data engineer", "carpenter", "air traffic controller", "librarian"),
        "{n} changed careers and now works as a {v}.",
    ),
    Attribute(
        "car", "{n} drives a {v}.",
        ("What vehicle does {n} own?", "Which automobile does {n} get around in?"),
        ("green Subaru Outback", "red Fiat Panda", "silver Volvo XC60", "white Tesla Model 3",
         "blue Toyota Corolla", "black Ford Ranger", "yellow Mini Cooper", "grey Skoda Octavia",
         "orange Citroen C3", "brown Jeep Wrangler"),
        "{n} sold the old car and now drives a {v}.",
    ),
    Attribute(
        "pet", "{n} has a {v}.",
        ("What animal lives with {n}?", "Which creature does {n} look after at home?"),
        ("beagle named Biscuit", "tabby cat called Miso", "grey parrot named Captain",
         "tortoise named Sheldon", "golden retriever called Maple", "rabbit named Clover",
         "corgi called Pixel", "goldfish named Bubbles"),
    ),
    Attribute(
        "instrument", "{n} plays the {v} in a community orchestra.",
        ("Which musical instrument can {n} perform on?", "What does {n} make music with?"),
        ("cello", "oboe", "trumpet", "viola", "harp", "bassoon", "french horn", "double bass",
         "clarinet", "timpani"),
    ),
    Attribute(
        "language", "{n} is taking evening classes in {v}.",
        ("Which foreign tongue is {n} studying?", "What language is {n} learning?"),
        ("Portuguese", "Japanese", "Swahili", "Finnish", "Korean", "Greek", "Turkish", "Dutch",
         "Icelandic", "Tagalog"),
    ),
    Attribute(
        "birthday", "{n}'s birthday is on {v}.",
        ("When was {n} born?", "On what date does {n} get a year older?"),
        ("14 February", "3 July", "29 October", "11 January", "22 May", "8 September",
         "30 March", "17 December", "5 August", "26 April"),
    ),
    Attribute(
        "coffee", "{n} always orders {v} at the cafe.",
        ("What does {n} like to drink in the morning?", "Which hot beverage does {n} prefer?"),
        ("an oat flat white", "a double espresso", "an iced latte", "a cortado",
         "a matcha latte", "a chai tea", "an americano", "a mocha"),
    ),
    Attribute(
        "sport", "{n} goes {v} every weekend.",
        ("How does {n} keep fit on Saturdays and Sundays?", "What is {n}'s weekend exercise?"),
        ("rock climbing", "sea kayaking", "trail running", "mountain biking", "sailing",
         "fencing", "surfing", "cross-country skiing"),
    ),
)
BY_KEY = {a.key: a for a in ATTRIBUTES}


@dataclass(frozen=True)
class Fact:
    person: str
    attribute: str
    value: str
    text: str
    question: str
    old_text: str | None = None  # the superseded version, when the value was updated


def people(count: int, rng: random.Random) -> list[str]:
    """Distinct full names; the first len(FIRST) also have distinct first names."""
    pairs = [f"{f} {last}" for f in FIRST for last in LAST]
    if count > len(pairs):
        raise ValueError(f"at most {len(pairs)} people")
    rng.shuffle(pairs)
    firsts: set[str] = set()
    chosen: list[str] = []
    for pair in pairs:
        first = pair.split()[0]
        if first not in firsts:
            firsts.add(first)
            chosen.append(pair)
    rest = [p for p in pairs if p not in set(chosen)]
    return (chosen + rest)[:count]


# Plain variant: what an agent typically saves about its user and project, each with a
# question worded the way the user would later ask, sharing as few key words as English allows.
PLAIN: tuple[tuple[str, str], ...] = (
    ("The user is allergic to peanuts and carries an EpiPen.",
     "Is there any food I must stay away from?"),
    ("The user's daughter Mia has violin lessons every Thursday at 5 pm.",
     "When does my kid practise her instrument with a teacher?"),
    ("Production deploys are frozen from 20 December until 5 January.",
     "Can we ship releases over the holidays?"),
    ("The user works on a 14-inch MacBook Pro with 32 GB of RAM.",
     "What computer am I using?"),
    ("The staging cluster runs in the eu-west-1 region on AWS.",
     "Where is the pre-production environment hosted?"),
    ("The user prefers tabs over spaces and a line length of 100 characters.",
     "What code formatting style do I like?"),
    ("The team's standup is at 9:30 every weekday in the Orion meeting room.",
     "When and where is our daily sync?"),
    ("The user's partner is called Sam and works as a veterinarian.",
     "What does my spouse do for a living?"),
    ("The user's car is a 2019 Honda Civic with a broken rear parking sensor.",
     "Which vehicle do I drive?"),
    ("The quarterly tax payment is due on 15 April.",
     "When must I pay the government this spring?"),
    ("The user is training for the Berlin marathon in September.",
     "What race am I preparing for?"),
    ("Our main database is PostgreSQL 16 with logical replication to a read replica.",
     "Which SQL engine backs the app?"),
    ("The user's landlord, Mr. Patel, wants the rent paid by bank transfer on the 1st.",
     "How should I pay for the apartment each month?"),
    ("The user dislikes meetings on Friday afternoons.",
     "Which time slot should we keep free of calls?"),
    ("The API rate limit is 600 requests per minute per token.",
     "How many calls can a client make before being throttled?"),
    ("The user's favourite cuisine is Ethiopian, especially injera with lentil stew.",
     "What kind of restaurant should I book for dinner?"),
    ("The user's passport expires in March 2027.",
     "When do I need to renew my travel document?"),
    ("The design system uses the Inter font and an 8-pixel spacing grid.",
     "What typeface do our UI components use?"),
    ("The user's son Leo is allergic to cats.",
     "Which pet would make my boy sick?"),
    ("The on-call rotation switches every Monday at 10:00.",
     "When does the pager duty hand over?"),
    ("The user's blood type is O negative.",
     "Which transfusion group am I?"),
    ("The company VPN uses WireGuard and its config lives in 1Password.",
     "Where do I find the remote access setup?"),
    ("The user drinks decaf after 2 pm because caffeine keeps them awake.",
     "Why do I avoid espresso in the afternoon?"),
    ("The frontend is built with SvelteKit and deployed to Cloudflare Pages.",
     "Which web framework does the UI use?"),
    ("The user's mother lives in Porto and visits every August.",
     "When does my mom come to stay?"),
    ("Invoices to clients must include the VAT number PT509876543.",
     "What tax ID goes on our bills?"),
    ("The user speaks Portuguese natively and is learning Japanese.",
     "Which languages do I know?"),
    ("The backup job copies the database to S3 every night at 02:00 UTC.",
     "How often is data saved offsite?"),
    ("The user's gym membership renews on the 3rd of each month for 45 euros.",
     "How much does my fitness club cost?"),
    ("The user wants pull requests to stay under 400 changed lines.",
     "How big should a code review be at most?"),
    ("The user's WiFi router is in the hallway closet and a restart fixes most outages.",
     "What should I try when the internet drops at home?"),
    ("The product launch is planned for 12 June at the Lisbon conference.",
     "When do we release the new offering publicly?"),
    ("The user's dentist is Dr. Okafor at the Riverside clinic.",
     "Who takes care of my teeth?"),
    ("Application logs go to Grafana Loki with 30 days of retention.",
     "How long do we keep service output records?"),
    ("The user is vegetarian but eats fish occasionally.",
     "Does my diet include meat?"),
    ("The user's flight home lands at Heathrow at 18:40 on Sunday.",
     "When do I arrive back in London?"),
    ("The mobile app supports iOS 16 and newer only.",
     "What is the oldest iPhone system version we still handle?"),
    ("The user's emergency contact is their brother Tom, phone 555-0142.",
     "Whom should someone call if something happens to me?"),
    ("Unit tests must finish in under two minutes on CI.",
     "What is the time limit for the automated checks?"),
    ("The user keeps their bike in basement storage room number 7.",
     "Where do I park my bicycle?"),
)


def plain_facts(count: int | None = None) -> list[Fact]:
    """The hand-written user and project facts with their questions (first `count`)."""
    pairs = PLAIN[:count] if count else PLAIN
    return [Fact(f"plain-{i}", f"plain-{i}", "", text, question)
            for i, (text, question) in enumerate(pairs)]


def hard_facts(persons: int, seed: int) -> list[Fact]:
    """Every person has every attribute: each fact's confusables are the same person's other
    attributes and the same attribute of every other person. Attributes with an update
    wording are stored first with an old value and then updated to the new one."""
    rng = random.Random(seed)
    out = []
    for person in people(persons, rng):
        for attr in ATTRIBUTES:
            value, old = rng.sample(attr.values, 2)
            question = rng.choice(attr.questions).format(n=person)
            if attr.update:
                text = attr.update.format(n=person, v=value)
                old_text = attr.statement.format(n=person, v=old)
                out.append(Fact(person, attr.key, value, text, question, old_text))
            else:
                out.append(Fact(person, attr.key, value,
                                attr.statement.format(n=person, v=value), question))
    return out
