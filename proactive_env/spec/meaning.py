"""Comparing text and values on meaning, not spelling (DESIGN.md §5).

``normalise`` maps surface variants of the same statement to one form: case and punctuation,
currency symbols and codes (£160, GBP 160, 160 pounds → "gbp 160"), number formats (1,000.00 →
1000), dates with or without weekdays (Tue 10 Mar, 10 March, 2026-03-10 → "10 mar"), times
(9:05am → 09:05), and common units (6.5 hours, ~6.5 h → "6.5 h"). ``same_value`` compares
structural values (ids, quantities, prices, dates, lists of items) after normalisation; a short
phrase naming a string value ("free standard delivery" for "standard") is that value.

Words in text are matched as whole terms (``terms``, ``mentions``), on both sides the same way:
weekdays and months in any spelling ("Wed", "Wednesday-night" → wed night), a weekday with or
without its date (one ``DateTerm`` per place a text names days: "Sat 13 Jun evening" says
"Saturday evening"; "Sun 3 and Mon 4 May" says "Sunday 3 May"; a wrong weekday names another day),
ordinals and number words ("1st", "first" → 1; "seven" → 7), hyphens ("14-day" → 14 day) and
plurals or past tenses ("days", "collected"). Decided: a bare number is not a date ("24" is not
in "24th April"), an -ing form is a word of its own ("check" is not in "checking": a checking
account, a booking, a meeting), and a date does not imply its weekday without the calendar.
A US state's postal code after a place and a comma is the state ("Providence, RI" = "Providence,
Rhode Island"). Out of scope, for the LLM judges: paraphrases that need world knowledge or the
records ("5 apixaban" for "5 tablets", "two weeks" for "14 days").
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_MONTH_NAMES = {"january": "jan", "february": "feb", "march": "mar", "april": "apr", "june": "jun", "july": "jul",
                "august": "aug", "september": "sep", "sept": "sep", "october": "oct", "november": "nov",
                "december": "dec"}
_MONTH_NAME = re.compile(r"\b(?:" + "|".join(_MONTH_NAMES) + r")\b")
_WEEKDAYS = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?"
_CURRENCY = [(r"£\s*", "gbp "), (r"\$\s*", "usd "), (r"€\s*", "eur "), (r"\bpounds?\b", "gbp"),
             (r"\beuros?\b", "eur"), (r"\bdollars?\b", "usd")]
_UNITS = [(r"\bhours?\b|\bhrs?\b", "h"), (r"\bminutes?\b|\bmins?\b", "min"), (r"\bkilograms?\b|\bkgs\b", "kg"),
          (r"\bcentimet(?:er|re)s?\b", "cm"), (r"\bgigabytes?\b", "gb"), (r"\bper cent\b|\bpercent\b", "%")]


_US_STATES = dict(pair.split("=") for pair in (
    "AL=Alabama AK=Alaska AZ=Arizona AR=Arkansas CA=California CO=Colorado CT=Connecticut DE=Delaware "
    "FL=Florida GA=Georgia HI=Hawaii ID=Idaho IL=Illinois IN=Indiana IA=Iowa KS=Kansas KY=Kentucky LA=Louisiana "
    "ME=Maine MD=Maryland MA=Massachusetts MI=Michigan MN=Minnesota MS=Mississippi MO=Missouri MT=Montana "
    "NE=Nebraska NV=Nevada NH=New_Hampshire NJ=New_Jersey NM=New_Mexico NY=New_York NC=North_Carolina "
    "ND=North_Dakota OH=Ohio OK=Oklahoma OR=Oregon PA=Pennsylvania RI=Rhode_Island SC=South_Carolina "
    "SD=South_Dakota TN=Tennessee TX=Texas UT=Utah VT=Vermont VA=Virginia WA=Washington WV=West_Virginia "
    "WI=Wisconsin WY=Wyoming DC=District_of_Columbia").split())
# A place's state as its postal code, after a comma and in capitals ("Providence, RI"; "Asheville,
# NC 28801"): the state's name. Only there (and in any case before a ZIP code): "IN", "OR", "ME"
# elsewhere are words.
_STATE_CODE = re.compile(r",\s*(" + "|".join(_US_STATES) + r")\b(?![a-z'])")
_STATE_ZIP = re.compile(r",\s*(" + "|".join(_US_STATES) + r")(?=\s+\d{5}\b)", re.IGNORECASE)  # any case before a ZIP


@functools.lru_cache(maxsize=1 << 14)
def normalise(text: str) -> str:
    """One canonical, lower-case form of ``text`` for matching (see module doc)."""
    return _normal(text, weekdays=False)


@functools.lru_cache(maxsize=1 << 14)
def _normal(text: str, weekdays: bool) -> str:
    """``normalise``; with ``weekdays`` a weekday is kept (as its three-letter form) instead of
    being dropped before a date, for matching words in text (``terms``)."""
    t = _STATE_ZIP.sub(lambda m: ", " + _US_STATES[m[1].upper()].replace("_", " "), str(text))
    t = _STATE_CODE.sub(lambda m: ", " + _US_STATES[m[1]].replace("_", " "), t)  # "Providence, RI"
    t = t.lower().replace("\u2019", "'").replace("\u2013", "-").replace("\u2014", "-")
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", t)  # 1,000 → 1000
    t = t.replace("&", " and ")  # "walnut & raisin" is "walnut and raisin"
    t = re.sub(r"\b(\d{4}-\d{2}-\d{2})t(?=\d{2}:\d{2})", r"\1 ", t)  # ISO "2026-05-15T16:00" is the date and the time
    t = re.sub(r"\b(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b", lambda m: f"{int(m[3])} {_month(int(m[2]))}", t)
    t = _MONTH_NAME.sub(lambda m: _MONTH_NAMES[m[0]], t)
    if weekdays:
        t = re.sub(rf"\b{_WEEKDAYS}\b\.?", lambda m: m[0][:3], t)  # "Saturday", "Sat." → "sat"
    else:
        t = re.sub(rf"\b{_WEEKDAYS}\b,?\s*(?=\d)", "", t)  # "tue 10 mar" → "10 mar"
    t = re.sub(r"\b(\d{1,2})(?:st|nd|rd|th)\b", r"\1", t)
    t = re.sub(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+(\d{1,2})\b(?!:)", r"\2 \1", t)
    for pattern, repl in _CURRENCY:
        t = re.sub(pattern, repl, t)
    t = re.sub(r"\b(gbp|usd|eur)(?=\d)", r"\1 ", t)  # "gbp160" → "gbp 160"
    t = re.sub(r"(?<!gbp )(?<!usd )(?<!eur )(?<![\d.])(\d+(?:\.\d+)?)\s*(gbp|usd|eur)\b(?!\s*\d)", r"\2 \1", t)  # "160 gbp" → "gbp 160"
    t = re.sub(r"\b(\d+)\.0+\b", r"\1", t)  # 160.00 → 160
    t = re.sub(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\b\.?", _clock, t)  # "9am", "2:40 p.m."
    t = re.sub(r"\b(\d):(\d{2})\b", r"0\1:\2", t)
    t = re.sub(r"\b(\d{2}:\d{2})\s*(?:-|to|until|till)\s*(\d{2}:\d{2})\b", r"\1-\2", t)  # a span: "16:00 to 19:00"
    for pattern, repl in _UNITS:
        t = re.sub(pattern, repl, t)
    t = re.sub(r"(\d)\s*(h|min|kg|cm|gb|mg|ml|g|km|oz|lb|%)(?![\w])", r"\1 \2", t)
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
    """Does ``text`` say ``needle``, on meaning and on whole terms (``terms``)? "collect" finds
    "collects" and "collected" but not "collection"; "3 left" does not find "13 left"; "24" does
    not find "240" or the date "24 April" (a day is a date, not a number); "Saturday evening"
    finds "Sat 13 Jun evening"; "Sunday 3 May" finds "Sun 3 and Mon 4 May"; "check" does not
    find "checking"."""
    return bool(occurrences(text, terms(needle)))


def occurrences(text: str, wanted: tuple[Term, ...]) -> list[int]:
    """Where the run of terms ``wanted`` starts in ``terms(text)`` (on meaning, whole terms)."""
    if not wanted:
        return []
    said, where = _term_index(text)
    first, n = wanted[0], len(wanted)
    starts = where.get("@" if isinstance(first, DateTerm) else first, ())
    return [i for i in starts if i + n <= len(said) and all(_term_matches(wanted[k], said[i + k]) for k in range(n))]


KEYWORD_GAP = 2  # a keyword's words may have this many other terms between each two ("a temporary £64.35 credit")


def spread_occurrences(text: str, wanted: tuple[Term, ...], gap: int = KEYWORD_GAP) -> list[tuple[int, int]]:
    """Where the terms ``wanted`` occur in ``terms(text)`` in order, each within ``gap`` other
    terms of the one before (on meaning, whole terms): ``(start, end)`` spans, end exclusive. A
    phrase said with a word or two inside it is the phrase: "nothing for Chris to sign or do" says
    "nothing to do", "a temporary £64.35 credit" says "temporary credit"."""
    if not wanted:
        return []
    said, where = _term_index(text)
    first = wanted[0]
    spans = []
    for start in where.get("@" if isinstance(first, DateTerm) else first, ()):
        at = start
        for term in wanted[1:]:
            at = next((j for j in range(at + 1, min(at + 2 + gap, len(said))) if _term_matches(term, said[j])), None)
            if at is None:
                break
        if at is not None:
            spans.append((start, at + 1))
    return spans


@functools.lru_cache(maxsize=1 << 12)
def _term_index(text: str) -> tuple[tuple[Term, ...], dict]:
    """``terms(text)`` and where each word (and any day: "@") occurs, for quick look-ups."""
    said = terms(text)
    where: dict = {}
    for i, t in enumerate(said):
        where.setdefault("@" if isinstance(t, DateTerm) else t, []).append(i)
    return said, where


def same_value(expected: Any, given: Any, names: frozenset[str] = frozenset(), within: bool = False) -> bool:
    """Structural equality after normalisation: numbers as numbers, strings on meaning, lists as
    multisets (a lone value stands for a one-item list, "a, b" for a list of strings), mappings on
    the expected keys (extra keys in ``given`` are fine). A leading article is no part of a name;
    with the scenario's ``names`` (``entity_names``), a value that qualifies a named entity after
    a comma ("The Weybosset Hotel, Providence") is also said by that name alone. Dates and times
    are compared as such in any usual form (``when``), a value with an aside that states nothing
    else ("Arun Raman (brother), +44 …") is the value (``_forms``). ``within`` a look-up, the
    given value may be the broader one: a day finds the record's time on that day."""
    if isinstance(expected, Window):
        return expected.holds(given)
    if isinstance(expected, bool) or isinstance(given, bool):
        return expected == given
    if isinstance(expected, (int, float)):
        number = _number(given)
        return number is not None and abs(number - float(expected)) < 1e-6
    if isinstance(expected, dict):
        if isinstance(given, str):  # "Ana Ruiz, ana.ruiz@…, 416-555-0148" states the object
            return _states(given, expected)
        return isinstance(given, dict) and all(k in given and same_value(v, given[k], names, within)
                                               for k, v in expected.items())
    if isinstance(expected, list):
        return same_list(expected, given, lambda e, g: same_value(e, g, names, within))
    if expected is None:
        return given is None
    number = _number(expected)
    if number is not None and _number(given) is not None:
        return abs(number - _number(given)) < 1e-6
    if not isinstance(given, (str, int, float)):
        return False
    return any(_same_text(str(expected), form, names, within) for form in _forms(str(given), str(expected)))


def _same_text(expected: str, given: str, names: frozenset[str], within: bool) -> bool:
    """A string value on meaning: a date or time as one (``when``); an id or code in any case and
    spacing ("clb 440917" for "CLB-440917"); else its words (``_same_words``, ``names``)."""
    dated, said = when(expected), when(given)
    if dated is not None and said is not None:
        return same_when(dated, said, within)
    if " ".join(expected.split()).lower() == " ".join(given.split()).lower():
        return True
    want, have = _bare(normalise(expected)), _bare(normalise(given))
    return (_same_words(want, have) or _code(want) == _code(have)
            or (have in names and have == _bare(normalise(expected.split(",")[0]))))


def _code(text: str) -> str:
    """An id or code with its separators alike and letters parted from digits ("wh 58812",
    "WH58812" → "wh-58812"); never a separator dropped between digits ("4-7" is not "47")."""
    return re.sub(r"[\s_-]+", "-", re.sub(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])", "-", text))


_ASIDE = re.compile(r"\s*\(([^()]*)\)")


def _forms(given: str, expected: str) -> list[str]:
    """A given value, and the same less its asides: a parenthesis ("Arun Raman (brother)") or,
    where it has more parts between commas than the expected value, the short extra parts after
    the first ("Arun Raman, my brother, +44 …") — each with no digit and no negation: a qualifier
    that states no other value, so it contradicts none (a part standing where the expected value
    has one of its own is compared: "The Weybosset Hotel, Boston" is another place)."""
    plain = _ASIDE.sub(lambda m: "" if _remark(m[1]) else m[0], given)
    parts = plain.split(",")
    extra = [p for p in parts[1:] if _remark(p) and len(p.split()) <= 3]
    room = len(parts) - len(expected.split(","))
    kept = parts[:1] + [p for p in parts[1:] if p not in extra] if 0 < len(extra) <= room else parts
    short = ",".join(kept).strip()
    return [given] + [f for f in dict.fromkeys((plain.strip(), short)) if f and f != given]


def _remark(words: str) -> bool:
    """Words that state no value: no digit, no negation."""
    return not re.search(r"\d", words) and not _NEGATIONS & set(re.split(r"[\s-]+", words.lower()))


_ARTICLE = re.compile(r"^(?:the|a|an) (?=\S)")


def _bare(name: str) -> str:
    """A normalised name less its leading article ("the weybosset hotel" → "weybosset hotel")."""
    return _ARTICLE.sub("", name)


_TITLE_PARTS = re.compile(r"\s+[—–-]\s+|:\s")  # "X — reservation 58812", "X: Jean's prescription"


def entity_names(titles: Iterable[str]) -> frozenset[str]:
    """The entities records name by their titles: each part of a title between dashes or after a
    colon ("The Weybosset Hotel — reservation WH-58812" names "weybosset hotel"; "Castle Street
    Pharmacy: Jean Hale's prescription" names "castle street pharmacy"), normalised, less a
    leading article. A record's own title names its entity: ``same_value`` takes such a name for
    a reference value that is the name and a qualifier after a comma ("The Weybosset Hotel,
    Providence"); a name with a comma of its own is whole ("Content Designer, Accessibility" is
    not named by "Content Designer")."""
    parts = (part for title in titles if title for part in _TITLE_PARTS.split(title))
    return frozenset(_bare(normalise(p)) for p in parts if p.strip())


_NEGATIONS = {"no", "not", "non", "without"}


def same_list(expected: list, given: Any, same=None) -> bool:
    """Lists as multisets, entries compared by ``same`` (default ``same_value``): a lone value
    stands for a one-item list, "a, b" for a list of strings, "a; b" (or one a line) for a list
    of objects each stated in words."""
    same = same or same_value
    if isinstance(given, str) and all(isinstance(e, str) for e in expected):
        given = [part for part in (p.strip() for p in given.split(",")) if part]  # "a, b" for ["a", "b"]
    elif isinstance(given, str) and all(isinstance(e, dict) for e in expected) and len(expected) > 1:
        given = [part for part in (p.strip() for p in re.split(r"[;\n]", given)) if part]
    elif not isinstance(given, list):
        given = [given]  # a single value for a one-item list
    if len(given) != len(expected):
        return False
    left = list(given)
    for item in expected:
        match = next((g for g in left if same(item, g)), None)
        if match is None:
            return False
        left.remove(match)
    return True


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar inside nested mappings and lists, with where it is (``a.b[0].c``)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for j, v in enumerate(value):
            yield from leaves(v, f"{path}[{j}]")
    else:
        yield path, value


def _states(text: str, expected: dict) -> bool:
    """Does a string state every value of an object (each as whole terms, nested ones too)?"""
    return all(mentions(text, _plain(v)) for _, v in leaves(expected) if v is not None and not isinstance(v, bool))


def _plain(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _same_words(expected: str, given: str) -> bool:
    """Equal, or a short phrase that names the expected value among a few plain words
    ("free standard delivery" for "standard"), with no negation; a name of several words also
    inside a description of it ("Pine nuts 4 oz (GW-2290), the substitute" for "Pine nuts 4 oz"),
    not negated just before it."""
    if expected == given:
        return True
    words = given.split()
    found = re.search(rf"(?<!\S){re.escape(expected)}(?!\S)", given) if expected else None
    if found is None:
        return False
    size = len(expected.split())
    if size >= 2:  # a name of several words, quoted inside a description of it, names it (not a list of many)
        return len(words) <= 3 * size + 6 and not _NEGATIONS & set(given[:found.start()].split()[-2:])
    return len(words) <= 8 and not _NEGATIONS & set(words)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"(?:gbp|usd|eur)?\s*(-?\d+(?:\.\d+)?)\s*(?:gbp|usd|eur)?", normalise(value))
        return float(m[1]) if m else None
    return None


# ---------------------------------------------------------------------- dates and times, as values
# A value that *is* a date, a time, a date and time, or a span of times is compared as one (``when``),
# whatever its form: ISO with or without the year or the "T" ("2026-05-14", "2026-05-14T14:00"),
# "14 May", "Thu 14 May 2026", "May 14th", "Thursday, May 14", "14/05" or "05/14"; "14:00",
# "2pm", "2:30 p.m.", "14:00h", "14h00"; spans "14:00-16:00", "2pm to 4pm". Decided: a numeric
# date with slashes is read only where one reading is a date (a part over 12: "14/05", "05/14")
# or both readings are the same day ("05/05"); "04/05" names no date here (the suite mixes UK and
# US scenarios, and a wrong guess would be a wrong day). A weekday given must be the date's.
# Why no library: ``dateparser`` is no dependency and reads free text relative to today;
# ``dateutil.parser`` fills what a string leaves out (a year, a time) from a default, so it cannot
# say which parts a value states, and it is no dependency either.
_WEEKDAY_INDEX = {d: i for i, d in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))}
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::\d{2})?)?$")
_CLOCK = re.compile(r"(\d{1,2})(?:[:h](\d{2}))?\s*(?:([ap])\.?m\.?|h(?:rs)?)?$")
_FILLERS = {"at", "on", "the", "of", "from"}
_SPAN_JOIN = {"-", "to", "until", "till"}


@dataclass(frozen=True)
class When:
    """What a date or time value states: any of year, month and day, weekday, and a span of
    minutes of the day (start, end; a lone time is a span of no length)."""

    year: int | None = None
    month: int | None = None
    day: int | None = None
    weekday: int | None = None
    minutes: tuple[int, int] | None = None


@functools.lru_cache(maxsize=1 << 12)
def when(value: str) -> When | None:
    """The date and time ``value`` states, where it is nothing else (None: it says more, or is
    no date or time)."""
    t = str(value).strip().lower().replace("\u2013", "-").replace("\u2014", "-")
    iso = _ISO.match(t)
    if iso:
        y, m, d = int(iso[1]), int(iso[2]), int(iso[3])
        clock = (int(iso[4]) * 60 + int(iso[5]),) * 2 if iso[4] else None
        return When(y, m, d, None, clock) if _valid(y, m, d) else None
    t = re.sub(r"\b(\d{4}-\d{2}-\d{2})t", r"\1 ", t)
    t = re.sub(r"\s*-\s*", " - ", re.sub(r"[(),]", " ", t))
    words = [w for w in t.split() if w not in _FILLERS]
    year = month = day = weekday = None
    times: list[int] = []
    joined = False
    i = 0
    while i < len(words):
        w = words[i].rstrip(".")
        nxt = words[i + 1].rstrip(".") if i + 1 < len(words) else ""
        name = _MONTH_NAMES.get(w, w[:3] if w[:3] in _MONTHS and len(w) <= 4 else None)
        if (iso := _ISO.match(w)) and month is None:
            year, month, day = int(iso[1]), int(iso[2]), int(iso[3])
        elif re.fullmatch(_WEEKDAYS, w) and weekday is None:
            weekday = _WEEKDAY_INDEX[w[:3]]
        elif name is not None and month is None:
            month = _MONTHS[name]
        elif (slash := re.fullmatch(r"(\d{1,2})/(\d{1,2})(?:/(\d{4}))?", w)) and month is None:
            read = _slashed(int(slash[1]), int(slash[2]))
            if read is None:
                return None
            day, month = read
            year = int(slash[3]) if slash[3] else None
        elif re.fullmatch(r"\d{4}", w) and year is None and month is not None:
            year = int(w)
        elif (m := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?", w)) and day is None and (
                month is not None and not times or _MONTH_NAMES.get(nxt, nxt[:3]) in _MONTHS):
            day = int(m[1])
        elif w in _SPAN_JOIN and len(times) == 1 and not joined:
            joined = True
        elif w in ("am", "pm", "a.m", "p.m") and times:
            times[-1] = _meridiem(times[-1], w[0])
        elif (clock := _CLOCK.fullmatch(w)) and (clock[2] or clock[3] or clock[1] and nxt in ("am", "pm", "a.m", "p.m")) \
                and len(times) < 1 + joined:
            hour, minute = int(clock[1]), int(clock[2] or 0)
            if hour > 24 or minute > 59 or (clock[3] and not 1 <= hour <= 12):
                return None
            times.append(_meridiem(hour * 60 + minute, clock[3]) if clock[3] else hour * 60 + minute)
        else:
            return None
        i += 1
    if joined and len(times) != 2 or (day is None) != (month is None) or (month is None and not times):
        return None
    if month is not None and not _valid(year or 2000, month, day):
        return None
    span = (times[0], times[-1]) if times else None
    return When(year, month, day, weekday, span)


@dataclass(frozen=True)
class Window:
    """A reference time the user takes anywhere in a span the records give (``Action.windows``):
    the reference value ``at``, and the ``earliest`` and ``latest`` values, ends included. Each is
    a date and time or a time of day, all alike; a given value is right where it states one point
    in time inside the span, and the day too where the reference states it (``same_when``: what
    the reference states the given value must state; its year the run's calendar says)."""

    at: str
    earliest: str
    latest: str

    def holds(self, given: Any) -> bool:
        """Does ``given`` state a point in time inside the window (its ends included)?"""
        said = when(given) if isinstance(given, str) else None
        if said is None or said.minutes is None or said.minutes[0] != said.minutes[1]:
            return False  # no time, or a span: not one start
        lo, hi = when(self.earliest), when(self.latest)
        if lo.month is None:  # a time of day: any day the given value states is the reference's
            return lo.minutes[0] <= said.minutes[0] <= hi.minutes[0]
        year = lo.year or said.year or 2000  # (a window across New Year names its years)
        point = _moment(said, year)
        return point is not None and _moment(lo, year) <= point <= _moment(hi, hi.year or year)


def _moment(stated: When, year: int) -> datetime.datetime | None:
    """The date and time ``stated`` holds, in ``year`` where it states none; None where it states
    no day, or a weekday against its date, or another year."""
    if stated.month is None or stated.minutes is None or stated.year not in (None, year) or not _valid(
            year, stated.month, stated.day):
        return None
    day = datetime.date(year, stated.month, stated.day)
    if stated.weekday is not None and day.weekday() != stated.weekday:
        return None
    return datetime.datetime.combine(day, datetime.time()) + datetime.timedelta(minutes=stated.minutes[0])


def states_value(text: str, value: Any) -> bool:
    """Does ``text`` state ``value`` (``mentions``)? A date or time value in any form is looked for
    as the words a text would use (``in_words``)."""
    words = in_words(value)
    return words is not None and mentions(text, words)


def in_words(value: Any) -> str | None:
    """A value as the words a text says it in: a date or time in one form ("Tuesday, May 12, 2026"
    → "tue 12 may"; "2pm" → "14:00"), anything else as it is; None for a date whose weekday is
    against the year's calendar (it states no day)."""
    stated = when(str(value))
    if stated is None:
        return str(value)
    if stated.weekday is not None and stated.year is not None and stated.month is not None and (
            datetime.date(stated.year, stated.month, stated.day).weekday() != stated.weekday):
        return None
    words = []
    if stated.month is not None:
        weekday = _DAYS[stated.weekday] + " " if stated.weekday is not None else ""
        words.append(f"{weekday}{stated.day} {_month(stated.month)}")
    if stated.minutes is not None:
        start, end = (f"{m // 60:02d}:{m % 60:02d}" for m in stated.minutes)
        words.append(start if start == end else f"{start}-{end}")
    return " ".join(words)


def _valid(year: int, month: int, day: int) -> bool:
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def _meridiem(minute: int, half: str | None) -> int:
    """A 12-hour clock time (minutes of the day) in the half of the day ``half`` ("a", "p") says."""
    return minute % 720 + (720 if half == "p" else 0) if half else minute


def _slashed(first: int, second: int) -> tuple[int, int] | None:
    """(day, month) of "first/second", where only one reading is a date or both are the same day."""
    readings = {(d, m) for d, m in ((first, second), (second, first)) if 1 <= m <= 12 and 1 <= d <= 31}
    return readings.pop() if len(readings) == 1 else None


def same_when(expected: When, given: When, within: bool = False) -> bool:
    """Does ``given`` state the date and time ``expected`` holds? What both state must agree (a
    weekday with the date's, where a year tells it); what the reference states the given value
    must state too — but its year (the run's calendar says it) and, ``within`` a look-up, its time
    (a day finds what holds a time on it). More than the reference states contradicts nothing."""
    if expected.month is not None and (given.month, given.day) != (expected.month, expected.day):
        return False
    if None not in (expected.year, given.year) and expected.year != given.year:
        return False
    year = expected.year or given.year
    if given.weekday is not None and year is not None and given.month is not None:
        if datetime.date(year, given.month, given.day).weekday() != given.weekday:
            return False
    if expected.minutes is not None:
        if given.minutes is None:
            return within
        return given.minutes == expected.minutes or (
            given.minutes[0] == given.minutes[1] == expected.minutes[0] and within)
    return True


# ---------------------------------------------------------------------- words, on meaning
# Why no library: ``dateparser`` parses a string that *is* a date, and its free-text search is slow,
# locale-heavy and reads dates relative to today; ``pint``/``quantulum3`` parse quantities but not
# "14-day" or "Wed night". What matching needs here is a closed set of surface forms (weekday and
# month abbreviations, ordinals, number words, hyphens, plurals, currency and unit spellings) that
# both sides are mapped to, so the tables below stay short and the core stays light.
_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen twenty").split()
_NUMBER_WORDS = {w: i for i, w in enumerate(_SMALL)} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
                                                       "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100}
_ORDINAL_WORDS = {"first": 1, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
                  "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
                  "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
                  "thirtieth": 30}  # "second" is left alone: it is also a unit of time
_TENS = r"(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[\s-](one|two|three|four|five|six|seven|eight|nine|first|third|fourth|fifth|sixth|seventh|eighth|ninth)"
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_JOINERS = {"and", "&", "or", "to", "through", "till", "until"}  # "Sun 3 and Mon 4 May": one date term


@dataclass(frozen=True)
class DateTerm:
    """The days a text names at one place: each a (weekday, day, month), any of which it may
    leave out ("Saturday", "13 Jun", "Sat 13 Jun"; "Sun 3 and Mon 4 May" names two)."""

    days: frozenset[tuple[str | None, int | None, str | None]]

    def covers(self, needle: DateTerm) -> bool:
        """Does this mention state at least what ``needle`` does? Every day the needle names is
        named here: the same date, with the same weekday if both give one; a weekday alone, by
        that weekday (a date without its weekday never implies one: "3 May" is not "Sunday")."""
        return all(any(_same_day(want, have) for have in self.days) for want in needle.days)

    def __str__(self) -> str:
        return "@" + "|".join(sorted(f"{w or ''}{d or ''}{m or ''}" for w, d, m in self.days))


def _same_day(want: tuple, have: tuple) -> bool:
    (ww, wd, wm), (hw, hd, hm) = want, have
    if wd is None:  # a weekday alone
        return ww == hw
    return (wd, wm) == (hd, hm) and (ww is None or hw is None or ww == hw)


Term = str | DateTerm


def stem(word: str) -> str:
    """A word less its plural or past-tense ending, and a final e ("collects", "collected" →
    "collect"; "days" → "day"; "closed", "close" → "clos"). The -ing form is left alone: it
    often names another thing ("checking" account, a "booking", a "meeting")."""
    if not word.isalpha() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "shes", "ches", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


@functools.lru_cache(maxsize=1 << 14)
def terms(text: str) -> tuple[Term, ...]:
    """The terms ``text`` says, in order: stemmed words, numbers (number words and ordinals as
    digits), and one ``DateTerm`` per day named; hyphens split words ("14-day" → 14 day,
    "Wednesday-night" → wed night); possessive 's is dropped."""
    t = _normal(str(text), weekdays=True)
    t = re.sub(rf"\b{_TENS}\b", lambda m: str(_NUMBER_WORDS[m[1]] + _NUMBER_WORDS.get(m[2], _ORDINAL_WORDS.get(m[2], 0))), t)
    words = [w for w in (w.strip(":") for w in re.split(r"[\s\-]+", t)) if w and w != "s"]  # "Budget:" is "budget"
    words = [str(_NUMBER_WORDS.get(w, _ORDINAL_WORDS.get(w, w))) for w in words]
    return tuple(_dates(words))


def _dates(words: list[str]) -> list[Term]:
    """Words with each run naming days ([weekday] day-number [joiner [weekday] day-number]… month,
    or a weekday alone) folded into one ``DateTerm``."""
    out: list[Term] = []
    i = 0
    while i < len(words):
        j, days, weekday = i, [], None
        while j < len(words):  # a run of weekdays, day numbers and joiners
            w = words[j]
            if w in _DAYS:
                weekday = w
            elif w.isdigit() and 1 <= int(w) <= 31 and len(w) <= 2:
                days.append((weekday, int(w)))
                weekday = None
            elif not (w in _JOINERS and j > i):
                break
            j += 1
        while j > i and words[j - 1] in _JOINERS:  # a joiner only joins: "Sat and" keeps its "and"
            j -= 1
        month = words[j] if j < len(words) and days and words[j] in _MONTHS else None
        if month is not None:
            out.append(DateTerm(frozenset((w, d, month) for w, d in days)))
            i = j + 1
        elif words[i] in _DAYS:
            out.append(DateTerm(frozenset({(words[i], None, None)})))
            i += 1
        else:
            out.append(stem(words[i]))
            i += 1
    return out


def _term_matches(needle: Term, given: Term) -> bool:
    if isinstance(needle, DateTerm):
        return isinstance(given, DateTerm) and given.covers(needle)
    return needle == given


def find_terms(haystack: tuple[Term, ...], needle: tuple[Term, ...]) -> int:
    """Where ``needle`` first occurs in ``haystack`` as a run of whole terms (-1: nowhere)."""
    n = len(needle)
    if not n:
        return -1
    for i in range(len(haystack) - n + 1):
        if all(_term_matches(needle[k], haystack[i + k]) for k in range(n)):
            return i
    return -1
