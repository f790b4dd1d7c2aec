"""Comparing text and values on meaning, not spelling (DESIGN.md §5).

``normalise`` maps surface variants of the same statement to one form: case and punctuation,
currency symbols and codes (£160, GBP 160, 160 pounds → "gbp 160"), number formats (1,000.00 →
1000), dates with or without weekdays (Tue 10 Mar, 10 March, 2026-03-10 → "10 mar"), times
(9:05am → 09:05), and common units (6.5 hours, ~6.5 h → "6.5 h"). ``same_value`` compares
structural values (ids, quantities, prices, dates, lists of items) after normalisation; a short
phrase naming a string value ("free standard delivery" for "standard") is that value.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_MONTH_NAMES = {"january": "jan", "february": "feb", "march": "mar", "april": "apr", "june": "jun", "july": "jul",
                "august": "aug", "september": "sep", "sept": "sep", "october": "oct", "november": "nov",
                "december": "dec"}
_WEEKDAYS = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?"
_CURRENCY = [(r"£\s*", "gbp "), (r"\$\s*", "usd "), (r"€\s*", "eur "), (r"\bpounds?\b", "gbp"),
             (r"\beuros?\b", "eur"), (r"\bdollars?\b", "usd")]
_UNITS = [(r"\bhours?\b|\bhrs?\b", "h"), (r"\bminutes?\b|\bmins?\b", "min"), (r"\bkilograms?\b|\bkgs\b", "kg"),
          (r"\bcentimet(?:er|re)s?\b", "cm"), (r"\bgigabytes?\b", "gb"), (r"\bper cent\b|\bpercent\b", "%")]


@functools.lru_cache(maxsize=1 << 14)
def normalise(text: str) -> str:
    """One canonical, lower-case form of ``text`` for matching (see module doc)."""
    t = str(text).lower().replace("\u2019", "'").replace("\u2013", "-").replace("\u2014", "-")
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", t)  # 1,000 → 1000
    t = re.sub(r"\b(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b", lambda m: f"{int(m[3])} {_month(int(m[2]))}", t)
    for name, short in _MONTH_NAMES.items():
        t = re.sub(rf"\b{name}\b", short, t)
    t = re.sub(rf"\b{_WEEKDAYS}\b,?\s*(?=\d)", "", t)  # "tue 10 mar" → "10 mar"
    t = re.sub(r"\b(\d{1,2})(?:st|nd|rd|th)\b", r"\1", t)
    t = re.sub(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+(\d{1,2})\b(?!:)", r"\2 \1", t)
    for pattern, repl in _CURRENCY:
        t = re.sub(pattern, repl, t)
    t = re.sub(r"\b(gbp|usd|eur)(?=\d)", r"\1 ", t)  # "gbp160" → "gbp 160"
    t = re.sub(r"(?<!gbp )(?<!usd )(?<!eur )(?<![\d.])(\d+(?:\.\d+)?)\s*(gbp|usd|eur)\b(?!\s*\d)", r"\2 \1", t)  # "160 gbp" → "gbp 160"
    t = re.sub(r"\b(\d+)\.0+\b", r"\1", t)  # 160.00 → 160
    t = re.sub(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b", _clock, t)
    t = re.sub(r"\b(\d):(\d{2})\b", r"0\1:\2", t)
    for pattern, repl in _UNITS:
        t = re.sub(pattern, repl, t)
    t = re.sub(r"(\d)\s*(h|min|kg|cm|gb|mg|ml|g|km|%)(?![\w])", r"\1 \2", t)
    t = re.sub(r"[~≈]", "", t)
    t = re.sub(r"[^\w:%.\- ]+", " ", t)
    t = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", t)
    return " ".join(t.split())


def _month(i: int) -> str:
    return next(m for m, n in _MONTHS.items() if n == i)


def _clock(m: re.Match) -> str:
    hour, minute = int(m[1]) % 12, int(m[2] or 0)
    return f"{hour + (12 if m[3] == 'p' else 0):02d}:{minute:02d}"


def mentions(text: str, needle: str) -> bool:
    """Does normalised ``text`` contain normalised ``needle`` from a word start ("collect" finds
    "collects"; "3 left" does not find "13 left")? A needle ending in a digit must end there too."""
    n = normalise(needle)
    tail = r"(?!\d)" if n[-1:].isdigit() else ""
    return bool(n) and re.search(rf"(?<![\w]){re.escape(n)}{tail}", normalise(text)) is not None


def same_value(expected: Any, given: Any) -> bool:
    """Structural equality after normalisation: numbers as numbers, strings on meaning, lists as
    multisets (a lone value stands for a one-item list, "a, b" for a list of strings), mappings on
    the expected keys (extra keys in ``given`` are fine)."""
    if isinstance(expected, bool) or isinstance(given, bool):
        return expected == given
    if isinstance(expected, (int, float)):
        number = _number(given)
        return number is not None and abs(number - float(expected)) < 1e-6
    if isinstance(expected, dict):
        return isinstance(given, dict) and all(k in given and same_value(v, given[k]) for k, v in expected.items())
    if isinstance(expected, list):
        if isinstance(given, str) and all(isinstance(e, str) for e in expected):
            given = [part for part in (p.strip() for p in given.split(",")) if part]  # "a, b" for ["a", "b"]
        elif not isinstance(given, list):
            given = [given]  # a single value for a one-item list
        if len(given) != len(expected):
            return False
        left = list(given)
        for item in expected:
            match = next((g for g in left if same_value(item, g)), None)
            if match is None:
                return False
            left.remove(match)
        return True
    if expected is None:
        return given is None
    number = _number(expected)
    if number is not None and _number(given) is not None:
        return abs(number - _number(given)) < 1e-6
    return isinstance(given, (str, int, float)) and _same_words(normalise(str(expected)), normalise(str(given)))


def _same_words(expected: str, given: str) -> bool:
    """Equal, or a short phrase that names the expected value among a few plain words
    ("free standard delivery" for "standard"), with no negation."""
    if expected == given:
        return True
    words = given.split()
    return (bool(expected) and len(words) <= 8 and not {"no", "not", "non", "without"} & set(words)
            and re.search(rf"(?<!\S){re.escape(expected)}(?!\S)", given) is not None)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"(?:gbp|usd|eur)?\s*(-?\d+(?:\.\d+)?)\s*(?:gbp|usd|eur)?", normalise(value))
        return float(m[1]) if m else None
    return None
