"""Training that says how it is going: a line every ``every`` seconds and after each evaluation —
steps done of the total, steps per second, time left, the latest evaluation's J — on stderr, so
that a run with ``--no-progress-bar`` (a log file, CI) is never silent for minutes."""

from __future__ import annotations

import sys
import time

from stable_baselines3.common.callbacks import BaseCallback

EVERY = 30.0  # seconds between lines (with a progress bar: only after evaluations)


def _duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


class ProgressLog(BaseCallback):
    """Logs progress lines; reads the latest evaluation from the ``ScoreEvalCallback`` it is given."""

    def __init__(self, total: int, scorer, every: float | None = EVERY, stream=None):
        super().__init__()
        self.total, self.scorer, self.every = total, scorer, every
        self.stream = stream or sys.stderr
        self._start = self._last = 0.0
        self._evals = 0

    def _on_training_start(self) -> None:
        self._start = self._last = time.monotonic()
        self._start_steps = self.num_timesteps
        self.line("started")

    def _on_step(self) -> bool:
        now = time.monotonic()
        new_eval = len(self.scorer.rows) > self._evals
        if new_eval or (self.every is not None and now - self._last >= self.every):
            self._evals = len(self.scorer.rows)
            self._last = now
            self.line()
        return True

    def _on_training_end(self) -> None:
        self.line("done")

    def line(self, event: str = "") -> str:
        elapsed = max(1e-9, time.monotonic() - self._start)
        done = self.num_timesteps
        rate = (done - self._start_steps) / elapsed
        left = (self.total - done) / rate if rate > 0 and done < self.total else 0.0
        parts = [f"train: {done:,}/{self.total:,} steps ({100 * done / max(1, self.total):.0f}%)",
                 f"{rate:,.0f} steps/s", f"elapsed {_duration(elapsed)}"]
        if left:
            parts.append(f"left ~{_duration(left)}")
        if self.scorer.rows:
            row = self.scorer.rows[-1]
            parts.append(f"latest eval J {row['overall/J']:.3f} at {row['timesteps']:,} steps "
                         f"(best {self.scorer.best:.3f})")
        text = ", ".join(parts) + (f" — {event}" if event else "")
        print(text, file=self.stream, flush=True)
        return text
