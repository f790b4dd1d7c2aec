"""Scenario time: every time in a scenario file is written ``"D<day> HH:MM"``.

Day 1 is the scenario's ``start_date``; the simulator counts minutes from 00:00 of day 1.
Daily times (sleep, review) are written ``"HH:MM"``.
"""

from __future__ import annotations

import datetime as dt
import re

MINUTES_PER_DAY = 24 * 60

_AT = re.compile(r"^D(\d{1,3}) ([01]\d|2[0-3]):([0-5]\d)$")
_DAILY = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def parse_at(text: str) -> int:
    """``"D2 09:30"`` → minutes since day 1 00:00. Raises ``ValueError`` with the expected form."""
    match = _AT.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"expected a time like 'D2 09:30' (day, then 24-hour HH:MM), got {text!r}")
    day, hour, minute = (int(g) for g in match.groups())
    if day < 1:
        raise ValueError(f"days count from D1, got {text!r}")
    return (day - 1) * MINUTES_PER_DAY + hour * 60 + minute


def parse_daily(text: str) -> int:
    """``"23:00"`` → minutes after midnight."""
    match = _DAILY.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"expected a daily time like '23:00' (24-hour HH:MM), got {text!r}")
    return int(match.group(1)) * 60 + int(match.group(2))


def format_at(minute: int) -> str:
    """Minutes since day 1 00:00 → ``"D2 09:30"``."""
    day, rest = divmod(int(minute), MINUTES_PER_DAY)
    return f"D{day + 1} {rest // 60:02d}:{rest % 60:02d}"


def parse_when(start_date: dt.date, text: str) -> int:
    """``"D3 09:00"`` or an ISO date-time (``"2026-04-15T04:15"``, ``"2026-04-15 04:15"``) in the
    calendar of a scenario starting on ``start_date`` → scenario minutes. Raises ``ValueError``."""
    text = re.sub(r"\s*\([^)]*\)\s*", " ", str(text)).strip()  # the clock's "D2 (Tue 3 Mar) 13:00" too
    try:
        return parse_at(text)
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(text.replace("T", " "))
    except ValueError:
        raise ValueError(f"expected a time like 'D3 09:00' or '{start_date} 09:00', got {text!r}") from None
    return (when.date() - start_date).days * MINUTES_PER_DAY + when.hour * 60 + when.minute
