"""What every command accepts for a scenario, resolved in one place: a shipped name
(``monitor``), a scenario file (``my/new.yaml``) or a gym id (``Proactivity-Monitor-v0``,
``Proactivity-Monitor-Planner-v0``, ``Proactivity-Monitor-Text-v0``, ``proactive_env:…``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..spec import shipped_names


@dataclass(frozen=True)
class ScenarioRef:
    scenario: str  # a shipped name or the path of a scenario file, as ``make_env`` and the envs take it
    persona: str | None = None  # the persona a gym id names, if it names one

    @property
    def is_file(self) -> bool:
        return self.scenario not in shipped_names()

    @property
    def label(self) -> str:
        """A short name for files and tables: the shipped name, or the file's stem."""
        return Path(self.scenario).stem if self.is_file else self.scenario


def resolve_scenario(text: str) -> ScenarioRef:
    """``text`` as a ``ScenarioRef``; ValueError (saying what is accepted) for anything else. A file
    is checked when it is loaded (so that ``validate`` reports it with the others)."""
    text = str(text).strip()
    if text in shipped_names():
        return ScenarioRef(text)
    if text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text:
        return ScenarioRef(text)
    env_id = text.split(":", 1)[1] if ":" in text else text
    if env_id.startswith("Proactivity-"):
        import gymnasium as gym

        from .registration import register_all

        if env_id not in gym.registry:
            register_all()
        try:
            kwargs = gym.spec(env_id).kwargs
        except gym.error.Error:
            raise ValueError(f"{text!r}: no registered env of that id; expected e.g. Proactivity-Monitor-v0") from None
        if not isinstance(kwargs.get("scenario"), str) or kwargs["scenario"] == "all":
            raise ValueError(f"{text!r} plays several scenarios; name one scenario (e.g. Proactivity-Monitor-v0)")
        return ScenarioRef(kwargs["scenario"], kwargs.get("persona"))
    raise ValueError(f"{text!r}: expected a scenario name ({', '.join(shipped_names())}), "
                     "a .yaml file or a gym id such as Proactivity-Monitor-v0")


__all__ = ["ScenarioRef", "resolve_scenario"]
