"""The leaderboard: overall, per persona, per scenario and per metric, with 95% CIs and n — as
markdown (display scale, labelled) and as a long CSV (data scale, with each value's unit)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..scoring.intervals import batch_intervals, iqm, method_description
from ..scoring.results import LEGEND, METRICS, UNITS, aggregate, display, display_ci, header, strata_cells
from ..spec.escape import csv_cell, md_cell
from .collect import Run


@dataclass
class Leaderboard:
    overall: list[dict]
    by_persona: list[dict]
    by_scenario: list[dict]
    reported: list[dict] = field(default_factory=list)

    @classmethod
    def of(cls, runs: list[Run], reported: list[dict] | None = None) -> "Leaderboard":
        records = [r.record() for r in runs]
        overall = aggregate(records, ("agent",))
        _iqm_of_j(overall, runs)
        overall.sort(key=lambda row: -row["J"])
        rank = {row["agent"]: i for i, row in enumerate(overall)}
        by = lambda key: sorted(aggregate(records, ("agent", key)), key=lambda r: (r[key], rank[r["agent"]]))  # noqa: E731
        board = cls(overall, by("persona"), by("scenario"), list(reported or []))
        board.over_runs = _intervals_over_runs(overall, runs)
        return board

    over_runs: int = 0  # rows whose intervals are over runs (a cell had one run), see ci_note

    @property
    def ci_note(self) -> str:
        methods = sorted({r["ci_method"] for r in self.overall + self.by_persona + self.by_scenario
                          if r.get("ci_method")})
        base = ("95% CIs: stratified bootstrap within scenario × persona cells (needs two runs in every cell); "
                + ("computed by " + "; ".join(map(method_description, methods)) if methods else "none computed")
                + "; J IQM: the interquartile mean of J (rliable's robust aggregate)")
        if not self.over_runs:
            return base + "."
        return (base + f"; {self.over_runs} overall rows whose cells have one run show a bootstrap over runs "
                "instead, marked ‡ (it ignores the cells' differences: wider than it should be when cells differ, "
                "and no interval where there is one run).")

    @property
    def agents(self) -> list[str]:
        return [row["agent"] for row in self.overall]


def _iqm_of_j(rows: list[dict], runs: list[Run]) -> None:
    """Each overall row's J IQM (``J_iqm``) and its interval (``J_iqm_ci``, stratified as the means')."""
    groups = []
    for row in rows:
        mine = [r.record() for r in runs if r.agent == row["agent"]]
        groups.append((np.asarray([[m["scores"]["J"] for m in mine]]), strata_cells(mine)))
        row["J_iqm"] = iqm(groups[-1][0][0])
    for row, found in zip(rows, batch_intervals(groups, "iqm")):
        row["J_iqm_ci"] = found[0][0] if found else None


def _intervals_over_runs(rows: list[dict], runs: list[Run]) -> int:
    """Where a row has no stratified interval (a cell with one run) but two runs or more, an
    interval over its runs (one stratum), marked ``ci_over_runs``. Returns how many rows."""
    todo = [(row, [r for r in runs if r.agent == row["agent"]]) for row in rows]
    todo = [(row, mine) for row, mine in todo if row.get("J_ci") is None and len(mine) >= 2]
    groups = [(np.asarray([[r.scores[m] for r in mine] for m in METRICS]), [np.arange(len(mine))]) for _, mine in todo]
    for (row, _), (found, method) in zip(todo, batch_intervals(groups)):
        row.update({f"{m}_ci": ci for m, ci in zip(METRICS, found)}, ci_over_runs=True, ci_method=method)
    return len(todo)


def _md_table(rows: list[dict], keys: tuple[str, ...], with_iqm: bool = False) -> list[str]:
    heads = [k.capitalize() for k in keys] + ["n"] + [header(m) for m in METRICS] + ["J 95% CI"]
    heads += ["J IQM (95% CI)"] if with_iqm else []
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(["---"] * len(keys) + ["---:"] * (len(heads) - len(keys)))
             + "|"]
    for row in rows:
        cells = [md_cell(row[k]) for k in keys] + [str(row["runs"])] + [display(m, row[m]) for m in METRICS]
        cells.append(display_ci("J", row.get("J_ci")) + (" ‡" if row.get("ci_over_runs") else ""))
        cells += [f"{display('J', row.get('J_iqm'))} {display_ci('J', row.get('J_iqm_ci'))}"] if with_iqm else []
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _metric_matrix(board: Leaderboard, metric: str) -> list[str]:
    scenarios = sorted({r["scenario"] for r in board.by_scenario})
    cell = {(r["agent"], r["scenario"]): r for r in board.by_scenario}
    lines = ["| Agent | all | " + " | ".join(map(md_cell, scenarios)) + " |", "|---|" + "---:|" * (len(scenarios) + 1)]
    for row in board.overall:
        values = [display(metric, cell[(row["agent"], s)][metric]) if (row["agent"], s) in cell else "—"
                  for s in scenarios]
        overall = f"{display(metric, row[metric])} {display_ci(metric, row[f'{metric}_ci'])}"
        lines.append(f"| {md_cell(row['agent'])} | {overall} | " + " | ".join(values) + " |")
    return lines


def markdown(board: Leaderboard, sources: list[str]) -> str:
    out = ["# Proactivity-Gym leaderboard", "", f"Runs from: {', '.join(map(md_cell, sources))}.", "", LEGEND + ".", "",
           board.ci_note, "", "## Overall (ranked by J)", ""]
    out += _md_table(board.overall, ("agent",), with_iqm=True)
    if board.reported:
        from .reported import NOTE

        out += ["", "### Reported in the paper (not re-run)", "", NOTE, "",
                "| Agent | " + " | ".join(header(m) for m in METRICS) + " | source |",
                "|---|" + "---:|" * len(METRICS) + "---|"]
        for row in board.reported:
            out.append(f"| {md_cell(row['agent'])} | " + " | ".join(display(m, row['scores'].get(m)) for m in METRICS)
                       + f" | {md_cell(row['source'])} |")
    out += ["", "## By persona", ""] + _md_table(board.by_persona, ("persona", "agent"))
    out += ["", "## By scenario", ""] + _md_table(board.by_scenario, ("scenario", "agent"))
    out += ["", "## By metric (overall with its 95% CI, then per scenario)"]
    for metric in METRICS:
        out += ["", f"### {header(metric)} — {UNITS[metric]['name']}", ""] + _metric_matrix(board, metric)
    return "\n".join(out) + "\n"


CSV_FIELDS = ("view", "agent", "scenario", "persona", "metric", "unit", "value", "ci_low", "ci_high", "n", "source")


def csv_rows(board: Leaderboard) -> list[dict]:
    """Long format on the data scale: one row per (view, agent, group, metric)."""
    rows = []
    views = (("overall", board.overall), ("persona", board.by_persona), ("scenario", board.by_scenario))
    for view, table in views:
        for row in table:
            for metric in METRICS:
                ci = row.get(f"{metric}_ci")
                rows.append({"view": view, "agent": row["agent"], "scenario": row.get("scenario", "all"),
                             "persona": row.get("persona", "all"), "metric": metric, "unit": UNITS[metric]["unit"],
                             "value": row[metric], "ci_low": ci[0] if ci else "", "ci_high": ci[1] if ci else "",
                             "n": row["runs"], "source": "run"})
    for row in board.reported:
        for metric in METRICS:
            value = row["scores"].get(metric)
            if value is not None:
                rows.append({"view": "overall", "agent": row["agent"], "scenario": "all", "persona": "all",
                             "metric": metric, "unit": UNITS[metric]["unit"], "value": value, "ci_low": "",
                             "ci_high": "", "n": "", "source": "reported: " + row["source"]})
    return rows


def write_csv(board: Leaderboard, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for row in csv_rows(board):
            writer.writerow({k: repr(float(v)) if isinstance(v, (float, np.floating)) else csv_cell(v)
                             for k, v in row.items()})
