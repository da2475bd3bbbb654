"""Deterministic synthetic memories and questions: the filler the benchmarks grow stores with.

Texts read like what an agent saves (people, projects, dates, numbers, places), 15-40 words,
and never repeat, so deduplication does not shrink the store under test.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

FIRST = (
    "Alice Ben Chloe Daniel Emma Felix Grace Hugo Isla Jack Kate Liam Maya Noah Olivia Paul "
    "Quinn Ruby Sam Tara Umar Vera Will Xena Yusuf Zoe Adam Beth Carl Dana Eric Fiona George "
    "Hannah Ivan Julia Kevin Laura Mark Nina Oscar Petra Rosa Simon Tom Uma Victor Wendy"
).split()
LAST = (
    "Smith Jones Brown Taylor Wilson Davies Evans Thomas Johnson Roberts Walker Wright Green "
    "Hall Wood Clarke Hughes Lewis Harris Martin Baker Turner Cooper Hill Moore King Scott"
).split()
TEAMS = "payments search mobile billing platform growth security data infra design support".split()
SYSTEMS = "auth ledger checkout notifications reporting gateway scheduler inventory".split()
TECH = "Postgres Kafka Redis gRPC Rust Go Kubernetes DuckDB Elasticsearch FastAPI".split()
CITIES = (
    "Berlin Madrid Oslo Vienna Dublin Prague Zurich Lyon Milan Boston Denver Austin Toronto "
    "Sydney Osaka Seoul Nairobi Lima Quito Athens"
).split()
COMPANIES = "Acme Globex Initech Umbrella Hooli Vandelay Stark Wayne Wonka Cyberdyne".split()
PROJECTS = "Atlas Beacon Comet Delta Ember Falcon Granite Harbor Iris Juniper Kestrel Lumen".split()
MONTHS = (
    "January February March April May June July August September October November December"
).split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
FOODS = "peanuts shellfish gluten sesame lactose soy eggs mustard".split()
DRINKS = "green tea black coffee oat latte espresso matcha chai".split()
PETS = "beagle tabby cat parrot rabbit labrador hamster tortoise".split()
PET_NAMES = "Biscuit Pepper Mochi Rocket Luna Waffles Pixel Nacho Olive Ziggy".split()
ITEMS = "laptops monitors licences travel training hardware cloud credits office chairs".split()
EDITORS = "VS Code Neovim Emacs PyCharm Zed Sublime Helix".split()
TRANSPORT = "bike tram train bus ferry scooter car".split()
DISHES = "ramen risotto tacos pho paella dumplings curry lasagne".split()
BOOKS = (
    "Dune;The Overstory;Project Hail Mary;Middlemarch;Piranesi;The Left Hand of Darkness;"
    "Educated;Circe"
).split(";")


def _date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2019, 2026)}"


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


Template = Callable[[random.Random], str]

TEMPLATES: tuple[Template, ...] = (
    lambda r: (
        f"On {_date(r)}, {_name(r)} from the {r.choice(TEAMS)} team decided to move the "
        f"{r.choice(SYSTEMS)} service to {r.choice(TECH)} because p95 latency reached "
        f"{r.randint(120, 990)} ms during the spring sale."
    ),
    lambda r: (
        f"{_name(r)} prefers {r.choice(DRINKS)} in the morning and asked that meetings with "
        f"{_name(r)} never start before {r.randint(8, 11)} am on {r.choice(WEEKDAYS)}s."
    ),
    lambda r: (
        f"The {r.choice(PROJECTS)} release {r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)} "
        f"shipped on {_date(r)} with {r.randint(3, 140)} bug fixes, and {_name(r)} will write "
        f"the changelog for the {r.choice(TEAMS)} team."
    ),
    lambda r: (
        f"{_name(r)} booked a flight to {r.choice(CITIES)} for {_date(r)}, seat "
        f"{r.randint(1, 38)}{r.choice('ABCDEF')}, and still needs a hotel near the old town "
        f"for {r.randint(2, 9)} nights."
    ),
    lambda r: (
        f"Invoice INV-{r.randint(10000, 99999)} from {r.choice(COMPANIES)} for "
        f"{r.randint(200, 48000)} USD is due on {_date(r)}; {_name(r)} approved it after "
        f"checking the {r.choice(ITEMS)} order."
    ),
    lambda r: (
        f"{_name(r)}'s daughter starts swimming lessons at the {r.choice(CITIES)} leisure centre "
        f"on {r.choice(WEEKDAYS)}s at {r.randint(3, 6)}:{r.choice(['00', '15', '30', '45'])} pm."
    ),
    lambda r: (
        f"The staging database db-{r.randint(1, 60)} ran out of disk at {r.randint(90, 99)}% on "
        f"{_date(r)}; {_name(r)} added {r.randint(2, 64) * 10} GB and set an alert at "
        f"{r.randint(70, 88)}%."
    ),
    lambda r: (
        f"{_name(r)} is allergic to {r.choice(FOODS)} and avoids the restaurants on "
        f"{r.choice(LAST)} Street that cook with it, so team lunches go to the {r.choice(DISHES)} "
        f"place on floor {r.randint(1, 12)}."
    ),
    lambda r: (
        f"During the {_date(r)} retrospective {_name(r)} proposed moving standups to "
        f"{r.randint(9, 11)}:{r.choice(['00', '15', '30'])} and the {r.choice(TEAMS)} team "
        f"agreed by {r.randint(5, 12)} votes to {r.randint(0, 4)}."
    ),
    lambda r: (
        f"{_name(r)} uses {r.choice(EDITORS)} with a dark theme and wants code reviews on the "
        f"{r.choice(PROJECTS)} repository answered within {r.randint(2, 48)} hours."
    ),
    lambda r: (
        f"{_name(r)} lent {_name(r)} the book '{r.choice(BOOKS)}' on {_date(r)} and expects it "
        f"back before the trip to {r.choice(CITIES)}."
    ),
    lambda r: (
        f"{_name(r)} ran the {r.choice(CITIES)} half marathon on {_date(r)} in 1 hour "
        f"{r.randint(20, 59)} minutes and wants to beat that time next year."
    ),
    lambda r: (
        f"Customer {r.choice(COMPANIES)} reported error E{r.randint(1000, 9999)} in the "
        f"{r.choice(SYSTEMS)} API after upgrading to version {r.randint(2, 7)}.{r.randint(0, 20)}; "
        f"{_name(r)} is investigating with the {r.choice(TEAMS)} team."
    ),
    lambda r: (
        f"{_name(r)} moved from {r.choice(CITIES)} to {r.choice(CITIES)} in {r.choice(MONTHS)} "
        f"{r.randint(2015, 2026)} and now commutes {r.randint(5, 75)} minutes by "
        f"{r.choice(TRANSPORT)}."
    ),
    lambda r: (
        f"The quarterly budget of the {r.choice(TEAMS)} team is {r.randint(20, 900) * 1000} USD, "
        f"with {r.randint(5, 40)}% reserved for {r.choice(ITEMS)}, according to {_name(r)}."
    ),
    lambda r: (
        f"{_name(r)} and {_name(r)} agreed on {_date(r)} that the {r.choice(PROJECTS)} prototype "
        f"must support {r.randint(2, 500) * 10} concurrent users before the board demo."
    ),
    lambda r: (
        f"{_name(r)} adopted a {r.choice(PETS)} called {r.choice(PET_NAMES)} on {_date(r)}; the "
        f"first vet visit is booked for {r.choice(WEEKDAYS)} at {r.randint(1, 6)} pm."
    ),
    lambda r: (
        f"The {r.choice(SYSTEMS)} cron job runs at {r.randint(0, 23):02d}:{r.randint(0, 59):02d} "
        f"UTC and takes about {r.randint(3, 90)} minutes; {_name(r)} wants it moved off peak "
        f"hours in {r.choice(CITIES)}."
    ),
    lambda r: (
        f"{_name(r)} recommended the {r.choice(DISHES)} at a small restaurant in "
        f"{r.choice(CITIES)} and said it is worth booking a table for {r.randint(2, 8)} on "
        f"a {r.choice(WEEKDAYS)} evening."
    ),
    lambda r: (
        f"Decision from {_date(r)}: the {r.choice(PROJECTS)} mobile app keeps offline mode, "
        f"caches at most {r.randint(5, 500)} MB, and {_name(r)} owns the rollout to "
        f"{r.randint(1, 100)}% of users."
    ),
    lambda r: (
        f"{_name(r)} told us on {_date(r)} that the {r.choice(COMPANIES)} contract renewal "
        f"depends on three things: a discount of {r.randint(3, 25)}%, a named support engineer "
        f"in {r.choice(CITIES)}, and an uptime credit if monthly availability drops below "
        f"99.{r.randint(1, 9)}%."
    ),
    lambda r: (
        f"Note for the {r.choice(TEAMS)} on-call rotation: when the {r.choice(SYSTEMS)} queue "
        f"holds more than {r.randint(2, 90) * 100} messages for {r.randint(5, 30)} minutes, "
        f"restart the consumer, page {_name(r)} if it fails twice, and log the incident in "
        f"the {r.choice(PROJECTS)} tracker."
    ),
)

QUESTIONS: tuple[Template, ...] = (
    lambda r: f"Why did the {r.choice(TEAMS)} team move the {r.choice(SYSTEMS)} service?",
    lambda r: f"When should meetings with {r.choice(FIRST)} start?",
    lambda r: f"What shipped in the latest {r.choice(PROJECTS)} release?",
    lambda r: f"When is {r.choice(FIRST)}'s flight to {r.choice(CITIES)}?",
    lambda r: f"Which invoice from {r.choice(COMPANIES)} is due soon?",
    lambda r: "When are the swimming lessons?",
    lambda r: "What happened when the staging database ran out of disk?",
    lambda r: f"What food is {r.choice(FIRST)} allergic to?",
    lambda r: "What time did we agree standups start?",
    lambda r: f"Which editor does {r.choice(FIRST)} use?",
    lambda r: f"Who borrowed the book {r.choice(BOOKS)}?",
    lambda r: f"How fast was {r.choice(FIRST)}'s half marathon in {r.choice(CITIES)}?",
    lambda r: f"Which error did {r.choice(COMPANIES)} report after the upgrade?",
    lambda r: f"Where does {r.choice(FIRST)} live now and how long is the commute?",
    lambda r: f"How much budget does the {r.choice(TEAMS)} team have this quarter?",
    lambda r: f"How many concurrent users must the {r.choice(PROJECTS)} prototype handle?",
    lambda r: f"What is the name of {r.choice(FIRST)}'s new pet?",
    lambda r: f"When does the {r.choice(SYSTEMS)} cron job run?",
    lambda r: f"Which restaurant in {r.choice(CITIES)} was recommended?",
    lambda r: "What did we decide about offline mode in the mobile app?",
)


def memory_texts(seed: int = 7) -> Iterator[str]:
    """An endless, deterministic stream of distinct memory texts."""
    rng = random.Random(seed)
    seen: set[str] = set()
    while True:
        text = rng.choice(TEMPLATES)(rng)
        if text not in seen:
            seen.add(text)
            yield text


def take(stream: Iterator[str], n: int) -> list[str]:
    return [next(stream) for _ in range(n)]


def questions(n: int, seed: int = 11) -> list[str]:
    """n deterministic questions about the kind of facts memory_texts produces."""
    rng = random.Random(seed)
    return [QUESTIONS[i % len(QUESTIONS)](rng) for i in range(n)]
