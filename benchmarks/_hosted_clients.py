"""The clients of benchmark_hosted: who visits, what each visit saves and recalls, checks."""

from __future__ import annotations

import argparse
import itertools
import random
import re
import time
from collections import OrderedDict
from typing import Any

from benchmarks.synthetic import memory_texts, take

COLOURS = ["teal", "amber", "crimson", "olive", "indigo", "coral", "ivory", "slate"]
NAMES = ["Miso", "Pepper", "Tofu", "Biscuit", "Nori", "Pixel", "Mango", "Juniper"]
JOBS = ["nurse", "welder", "pilot", "chemist", "teacher", "architect", "baker", "editor"]
CITIES = ["Leipzig", "Porto", "Osaka", "Tucson", "Bergen", "Quito", "Lyon", "Perth"]
QUESTION = "What is my favourite colour and what is my cat called?"
MARKER = re.compile(r"\[u(\d{5})\]")


def facts(user: int, saves: int, visit: int = 0) -> list[str]:
    """Memories of one visit, each tagged with its owner's marker: on a user's first visit
    the same kind of facts for every user (shared words), then varied texts (a returning
    user says new things; repeating the same ones would only exercise near-duplicate skips)."""
    pick = lambda items, salt: items[(user * 7 + salt) % len(items)]  # noqa: E731
    base = [
        f"My favourite colour is {pick(COLOURS, 1)} and my cat is called {pick(NAMES, 2)}.",
        f"I work as a {pick(JOBS, 3)} in {pick(CITIES, 4)}.",
        f"My project deadline is on day {user % 28 + 1} of month {user % 12 + 1}.",
        f"I drink {pick(['tea', 'coffee', 'cocoa', 'mate'], 5)} every morning at {user % 5 + 6}.",
        f"My manager is called {pick(NAMES, 6)} {pick(CITIES, 7)}son.",
    ]
    first = base[:saves] if visit == 0 else []
    varied = take(memory_texts(seed=user * 1009 + visit), saves - len(first))
    return [f"[u{user:05d}] {text}" for text in first + varied]


class Visits:
    """Which user visits next: Zipf-skewed draws (seeded) or every user once; and whether
    the user's store is cold, judged by an LRU of `max_open` users kept the way the server
    keeps its open stores (exact with one client, close with several)."""

    def __init__(self, users: int, zipf: float, max_open: int, seed: int = 15) -> None:
        self.rng = random.Random(seed)
        self.users, self.zipf = users, zipf
        self.weights = list(itertools.accumulate(1 / (k ** zipf) for k in range(1, users + 1)))
        self.order = iter(range(users))
        self.count: dict[int, int] = {}
        self.recent: OrderedDict[int, None] = OrderedDict()
        self.max_open = max_open

    def next(self) -> tuple[int, int, str] | None:
        """(user, visit number of that user, "new" | "reopen" | "open"), None when done."""
        if self.zipf > 0:
            user = self.rng.choices(range(self.users), cum_weights=self.weights)[0]
        else:
            user = next(self.order, -1)
            if user < 0:
                return None
        visit = self.count.get(user, 0)
        self.count[user] = visit + 1
        state = "open" if user in self.recent else ("reopen" if visit else "new")
        self.recent[user] = None
        self.recent.move_to_end(user)
        while len(self.recent) > self.max_open:
            self.recent.popitem(last=False)
        return user, visit, state


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {
            "save": [], "recall": [], "session": [], "first call, store new": [],
            "first call, store reopened": []}
        self.errors: list[str] = []
        self.cross_user = 0
        self.recalled = 0
        self.own_fact_found = 0
        self.visits_done = 0
        self.users_seen: set[int] = set()

    def check_recall(self, user: int, text: str) -> None:
        owners = [int(m) for m in MARKER.findall(text)]
        self.recalled += len(owners)
        self.cross_user += sum(1 for owner in owners if owner != user)
        if not owners:
            self.errors.append(f"user {user}: recall returned nothing")
        elif "favourite colour" in text:
            self.own_fact_found += 1

    def first_call(self, state: str, seconds: float) -> None:
        if state != "open":
            key = "first call, store new" if state == "new" else "first call, store reopened"
            self.latency[key].append(seconds)


def _plan(saves: int, recalls: int) -> list[str]:
    """The visit's calls: saves with the recalls spread among them (20 + 5: 4 saves, 1 recall)."""
    every = max(1, saves // max(1, recalls))
    calls: list[str] = []
    for n in range(saves):
        calls.append("save")
        if (n + 1) % every == 0 and calls.count("recall") < recalls:
            calls.append("recall")
    return calls + ["recall"] * (recalls - calls.count("recall"))


async def _mcp_visit(client: Any, user: int, visit: int, state: str, args: argparse.Namespace,
                     tally: Tally) -> None:
    texts = iter(facts(user, args.saves, visit))
    for number, kind in enumerate(_plan(args.saves, args.recalls)):
        arguments = ({"memories": [{"content": next(texts)}]} if kind == "save"
                     else {"query": QUESTION})
        t0 = time.perf_counter()
        result = await client.call_tool(f"{kind}_memories", arguments)
        elapsed = time.perf_counter() - t0
        tally.latency[kind].append(elapsed)
        if number == 0:
            tally.first_call(state, elapsed)
        if result.is_error:
            tally.errors.append(f"user {user} {kind}: {result.content[0].text}")
        elif kind == "recall":
            tally.check_recall(user, result.content[0].text)


async def _mcp_worker(base: str, token: str, visits: Visits, deadline: float,
                      args: argparse.Namespace, tally: Tally) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    current = {"user": ""}

    async def hook(request: Any) -> None:
        request.headers["X-TinyContext-User-Id"] = current["user"]

    http = httpx2.AsyncClient(headers={"X-TinyContext-Proxy-Token": token}, timeout=120,
                              event_hooks={"request": [hook]})
    async with http:
        while time.monotonic() < deadline and (drawn := visits.next()) is not None:
            user, visit, state = drawn
            current["user"] = f"user-{user:05d}@example.com"
            try:
                started = time.perf_counter()
                async with Client(streamable_http_client(base + "/mcp", http_client=http),
                                  mode="legacy") as client:
                    tally.latency["session"].append(time.perf_counter() - started)
                    await _mcp_visit(client, user, visit, state, args, tally)
            except Exception as exc:  # noqa: BLE001 - counted, the run goes on
                tally.errors.append(f"user {user}: {type(exc).__name__}: {exc}")
            tally.visits_done += 1
            tally.users_seen.add(user)


async def _rest_worker(base: str, token: str, visits: Visits, deadline: float,
                       args: argparse.Namespace, tally: Tally) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        while time.monotonic() < deadline and (drawn := visits.next()) is not None:
            user, visit, state = drawn
            headers = {"X-TinyContext-Proxy-Token": token,
                       "X-TinyContext-User-Id": f"user-{user:05d}@example.com"}
            texts = iter(facts(user, args.saves, visit))
            try:
                for number, kind in enumerate(_plan(args.saves, args.recalls)):
                    body = ({"memories": [{"content": next(texts)}]} if kind == "save"
                            else {"query": QUESTION})
                    t0 = time.perf_counter()
                    response = await http.post(f"/{kind}_memories", headers=headers, json=body)
                    elapsed = time.perf_counter() - t0
                    tally.latency[kind].append(elapsed)
                    if number == 0:
                        tally.first_call(state, elapsed)
                    if response.status_code != 200:
                        tally.errors.append(f"user {user} {kind}: {response.status_code}")
                    elif kind == "recall":
                        text = "\n".join(m["content"] for m in response.json()["memories"])
                        tally.check_recall(user, text)
            except Exception as exc:  # noqa: BLE001
                tally.errors.append(f"user {user}: {type(exc).__name__}: {exc}")
            tally.visits_done += 1
            tally.users_seen.add(user)


