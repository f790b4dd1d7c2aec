"""The HTML of every page: Jinja2 templates (``templates/``) with autoescape on, so no string
from a trajectory, a scenario or an agent can become markup. Pages are self-contained (inline
style, no scripts, no fetches)."""

from __future__ import annotations

import functools
from pathlib import Path

TEMPLATES = Path(__file__).with_name("templates")


@functools.cache
def environment():
    try:
        from jinja2 import Environment, FileSystemLoader, StrictUndefined
    except ImportError as exc:  # a missing extra, said in one line by the CLI
        raise ImportError(f"HTML pages need jinja2 ({exc.name} is missing): pip install -e '.[render]'") from None
    from ..scoring.results import display, display_ci, header

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(display=lambda v, m: display(m, v), display_ci=lambda v, m: display_ci(m, v),
                       pct=lambda v: "—" if v is None else f"{100 * v:.0f}")
    env.globals.update(header=header)
    return env


def render(template: str, **context) -> str:
    """``templates/<template>`` rendered with ``context`` (every value escaped unless marked safe)."""
    return environment().get_template(template).render(**context)
