"""`report` compares agents across folders; `show` draws one episode; rgb_array is that picture;
confidence intervals are stratified and honest about small samples."""

import csv
import json
import re
import shutil
import subprocess

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from proactive_env import cli  # noqa: E402
from proactive_env.baselines import make_agent  # noqa: E402
from proactive_env.envs.timeline import episode_rgb, ta_decisions  # noqa: E402
from proactive_env.evaluate import evaluate, plan  # noqa: E402
from proactive_env.report.episode import episode_page, figure_bytes, trajectory_scenario  # noqa: E402
from proactive_env.scoring import load_trajectory  # noqa: E402
from proactive_env.scoring.results import aggregate, display_ci, stratified_bootstrap  # noqa: E402


@pytest.fixture(scope="module")
def two_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("evals")
    evaluate(plan(["oracle", "noop"], ["monitor"], ["planner", "operator"], range(2)), root / "a", make_agent)
    evaluate(plan(["noop", "always-suggest"], ["monitor"], ["planner"], range(1)), root / "b", make_agent)
    return root


def test_report_compares_agents_across_folders(two_folders, tmp_path):
    out = tmp_path / "report"
    assert cli.main(["report", str(two_folders / "a"), str(two_folders / "b"), "--out", str(out), "--reported"]) == 0
    md = (out / "leaderboard.md").read_text()
    # noop is in both folders (its settings may differ): one row per folder; the others keep their names
    # markdown cells are escaped (issue 22): "noop [a]" is written "noop \[a\]" and renders as it reads
    assert "| noop \\[a\\] |" in md and "| noop \\[b\\] |" in md and "| oracle |" in md and "| always-suggest |" in md
    assert "Reported in the paper (not re-run)" in md and "Claude Opus 5 (reported)" in md
    for section in ("## By persona", "## By scenario", "### TA % — temporal allocation", "J 95% CI"):
        assert section in md
    rows = list(csv.DictReader(open(out / "leaderboard.csv")))
    views = {r["view"] for r in rows}
    assert views == {"overall", "persona", "scenario"}
    single = [r for r in rows if r["agent"] == "always-suggest" and r["view"] == "overall"]
    assert single and all(r["ci_low"] == "" and r["n"] == "1" for r in single)  # one run: no interval
    reported = [r for r in rows if r["source"].startswith("reported")]
    assert {r["metric"] for r in reported if r["agent"].startswith("Claude")} == {"TC", "TA", "TR_D", "TR_J",
                                                                                 "continuation"}
    for name in ("3t-bars", "3t-radar", "j-by-scenario"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 5000
        assert (out / "plots" / f"{name}.svg").read_text().lstrip().startswith("<?xml")
    page = (out / "index.html").read_text()
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org", "")
    assert page.count("data:image/png;base64,") == 4  # bars, radar, by scenario; the paper's in its own panel
    assert (out / "plots" / "reported.png").exists()
    assert "Where each agent loses points: tasks" in page and "Where each agent loses points: TA decisions" in page
    links = re.findall(r'href="(episodes/[^"]+)"', page)
    assert len(links) == 2 * 2 * 2 + 1 + 1  # every run of every label
    assert all((out / link).exists() for link in links)


def test_report_rejects_a_folder_without_runs(tmp_path):
    proc_status = cli.main(["report", str(tmp_path)])
    assert proc_status == 2


def test_show_draws_png_and_html_with_the_transcript(two_folders, tmp_path):
    source = next((two_folders / "a" / "trajectories" / "oracle").glob("*.json"))
    trajectory = load_trajectory(source)
    trajectory["transcript"] = [
        {"role": "system", "content": "You are a proactive assistant."},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "read_record", "arguments": "{\"id\": \"r01\"}"}}]},
        {"role": "tool", "content": "r01: <the listing>"},
    ]
    path = tmp_path / "llm.json"
    path.write_text(json.dumps(trajectory))
    assert cli.main(["show", str(path), "--formats", "png,svg,html"]) == 0
    assert (tmp_path / "llm.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "llm.svg").stat().st_size > 10000
    page = (tmp_path / "llm.html").read_text()
    assert "Conversation (3 turns)" in page and "read_record" in page and "&lt;the listing&gt;" in page
    assert "Monitor Purchase" in page and "TR-D %" in page


def test_show_reads_the_richer_log_and_ignores_unknown_entries(monitor):
    base = [{"t": 0, "type": "run_start"}, {"t": 600, "type": "task_active", "task": "t01_setup"}]
    richer = base + [
        {"t": 610, "type": "action", "verb": "start", "task": "t01_setup", "depth": "PREPARE"},
        {"t": 620, "type": "job", "task": "t01_setup", "resource": None, "start": 620, "end": 900,
         "sleep_time": False},
        {"t": 630, "type": "intrusion", "task": "t01_setup", "resource": None},
        {"t": 640, "type": "defer", "task": "t05_warranty", "until": 2000},
        {"t": 650, "type": "decision", "task": "t01_setup", "actions": ["save_plan"], "verdict": "decline",
         "rule": "persona", "trust_before": 4.43, "trust_after": 4.2},
        {"t": 660, "type": "trust", "task": "t01_setup", "depth": "EXECUTE", "aligned": False, "before": 4.2,
         "after": 2.4},
        {"t": 670, "type": "job_done", "task": "t01_setup"},
        {"t": 680, "type": "something_new", "payload": [1, 2]},
    ]
    plain = episode_rgb(monitor, "planner", base, dpi=40)
    drawn = episode_rgb(monitor, "planner", richer, dpi=40)
    assert plain.shape == drawn.shape and (plain != drawn).any()


def test_ta_decisions_reads_a_list_or_one_window(monitor):
    assert ta_decisions(monitor) == list(monitor.ta_decisions) and len(monitor.ta_decisions) >= 1

    class One:
        ta_window = "the window"

    assert ta_decisions(One()) == ["the window"]


def test_rgb_array_is_the_show_picture():
    env = gym.make("Proactivity-Monitor-Operator-v0", render_mode="rgb_array")
    agent = make_agent("policy-follower")
    obs, info = env.reset(seed=3)
    agent.reset(env.unwrapped, 3)
    for _ in range(15):
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
    frame = env.render()
    world = env.unwrapped.world
    trajectory = env.unwrapped.trajectory(agent="policy-follower")
    # what `show` draws from the saved run (the seed's variant rebuilt from the file), at the same time
    again = episode_rgb(trajectory_scenario(json.loads(json.dumps(trajectory))), "operator", trajectory["log"],
                        now=world.now)
    assert frame.dtype == np.uint8 and frame.shape[2] == 3 and np.array_equal(frame, again)
    assert figure_bytes(trajectory)[:4] == b"\x89PNG"


def test_episode_page_is_self_contained(two_folders):
    source = next((two_folders / "a" / "trajectories" / "noop").glob("*.json"))
    page = episode_page(load_trajectory(source), b"\x89PNG fake")
    assert "<script" not in page and "data:image/png;base64," in page and "Event log" in page


# ---------------------------------------------------------------------- confidence intervals
def _runs(values_by_cell):
    return [{"agent": "a", "scenario": s, "persona": p, "seed": i, "scores": {m: v for m in
                                                                            ("TC", "TA", "TR_D", "TR_J", "J",
                                                                             "continuation")}}
            for (s, p), values in values_by_cell.items() for i, v in enumerate(values)]


def test_bootstrap_resamples_within_scenario_and_persona():
    # two cells, each constant: pooled resampling would wander, within-cell resampling cannot
    runs = _runs({("monitor", "planner"): [0.0, 0.0, 0.0], ("experiments", "planner"): [1.0, 1.0, 1.0]})
    row = aggregate(runs, ("agent",))[0]
    assert row["J"] == 0.5 and row["J_ci"] == [0.5, 0.5] and row["cells"] == 2
    assert display_ci("J", row["J_ci"]) == "no spread"
    pooled = stratified_bootstrap([0.0] * 3 + [1.0] * 3, [np.arange(6)])
    assert pooled[0] < 0.4 and pooled[1] > 0.6


def test_interval_needs_two_runs_in_every_cell():
    runs = _runs({("monitor", "planner"): [0.2, 0.6], ("monitor", "operator"): [0.4]})
    row = aggregate(runs, ("agent",))[0]
    assert row["J_ci"] is None and display_ci("J", None) == "n/a"
    varied = aggregate(_runs({("monitor", "planner"): [0.2, 0.6, 0.4, 0.9]}), ("agent",))[0]
    lo, hi = varied["J_ci"]
    assert lo < varied["J"] < hi


def test_aggregate_intervals_are_the_stratified_bootstrap_of_each_group():
    # the table's shortcut (one draw shared by groups of one shape, one quantile call) must give
    # each group exactly its own stratified bootstrap interval, interleaved members included
    runs = _runs({("monitor", "planner"): [0.1, 0.7, 0.4], ("experiments", "planner"): [0.9, 0.2],
                  ("monitor", "operator"): [0.3, 0.8, 0.5, 0.6]})
    runs = runs[::2] + runs[1::2]  # members of one cell not next to each other
    row = aggregate(runs, ("agent",))[0]
    j = [r["scores"]["J"] for r in runs]
    cells = [np.asarray([i for i, r in enumerate(runs) if (r["scenario"], r["persona"]) == cell])
             for cell in sorted({(r["scenario"], r["persona"]) for r in runs}, key=str)]
    assert row["J_ci"] == pytest.approx(list(stratified_bootstrap(j, cells)), rel=1e-12)
    by_persona = {r["persona"]: r["J_ci"] for r in aggregate(runs, ("agent", "persona"))}
    operator = [r["scores"]["J"] for r in runs if r["persona"] == "operator"]
    assert by_persona["operator"] == pytest.approx(list(stratified_bootstrap(operator, [np.arange(4)])), rel=1e-12)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Chromium (apt-get install -y chromium)")
def test_report_page_opens_in_headless_chromium_without_console_messages(two_folders, tmp_path):
    out = tmp_path / "report"
    assert cli.main(["report", str(two_folders / "a"), "--out", str(out), "--reported"]) == 0
    pages = [out / "index.html", next((out / "episodes").rglob("*.html"))]
    for page in pages:
        proc = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                               "--v=0", "--window-size=1400,1200", f"--screenshot={tmp_path / 'shot.png'}",
                               page.as_uri()], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and (tmp_path / "shot.png").stat().st_size > 10000
        assert ":CONSOLE" not in proc.stderr, proc.stderr


# ---------------------------------------------------------------------- escaping by construction
MARKUP = "<img src=x onerror=alert(1)>"


def test_report_escapes_data_and_keeps_every_page_inside_its_folder(two_folders, tmp_path, capsys):
    """A trajectory's agent and persona are data: they never become markup, and a page built from
    them never lands outside the report folder (issue 22: stored XSS, a page written outside).
    Files whose fields do not reproduce the run they hold are named and left out altogether."""
    folder = tmp_path / "evil"
    shutil.copytree(two_folders / "a", folder)
    source = next((folder / "trajectories" / "oracle").glob("*.json"))
    for field, value in (("agent", f"{MARKUP}/../../../escaped"), ("persona", f"../../{MARKUP}")):
        data = json.loads(source.read_text())
        data[field] = value
        (source.parent / f"forged-{field}.json").write_text(json.dumps(data))
    out = tmp_path / "out" / "report"
    assert cli.main(["report", str(folder), "--out", str(out)]) == 0
    written = [p for p in tmp_path.rglob("*.html")]
    assert written and all(out.resolve() in p.resolve().parents for p in written)
    for page in written:
        text = page.read_text()
        assert MARKUP not in text and "<script" not in text
    skipped = capsys.readouterr().err
    assert "forged-agent.json" in skipped and "forged-persona.json" in skipped


def test_episode_path_is_slugs_only():
    from proactive_env.report.build import episode_path
    from proactive_env.report.collect import Run

    rel = episode_path(Run("a/../../b", "../monitor", "<p>", 3, {}, None, None))
    assert ".." not in rel.parts and all(re.fullmatch(r"[A-Za-z0-9._-]+", part) for part in rel.parts)


# ---------------------------------------------------------------------- why points were lost
def test_explanation_is_the_scorers_own_and_names_what_lost_points(two_folders, capsys):
    from proactive_env.report.explain import clock, explain

    source = next((two_folders / "a" / "trajectories" / "noop").glob("*planner*.json"))
    trajectory = load_trajectory(source)
    x = explain(trajectory)
    # the same scorer: the explanation's totals are the run's scores
    for metric in ("TC", "TA", "TR_D", "TR_J", "J"):
        assert x.scores[metric] == pytest.approx(trajectory["scores"][metric], abs=1e-9)
    assert len(x.tasks) == len(trajectory["scores"]["tasks"])
    # noop does nothing: every task that needed doing lost outputs, each fact it needed is missed
    needed = [r for r in x.tasks if r.wanted not in ("NOOP", "cut_off")]
    assert needed and all(r.used == "NOOP" and r.depth_match is False for r in needed)
    assert any(r.facts_missed for r in needed) and not any(r.facts_found for r in needed)
    counted = [d for d in x.decisions if d.counted]
    assert counted and all(not d.now and "urgent" in d.reason for d in counted)
    scenario = trajectory_scenario(trajectory)
    assert clock(scenario, 2 * 24 * 60 + 9 * 60 + 10).startswith("D3 (") and clock(scenario, 0).endswith(" 00:00")
    assert cli.main(["show", str(source), "--why"]) == 0
    text = capsys.readouterr().out
    assert "Why points were lost" in text and "TA decisions" in text and "Trust over time" in text


def test_episode_page_shows_the_lost_points_tables(two_folders):
    source = next((two_folders / "a" / "trajectories" / "oracle").glob("*.json"))
    trajectory = load_trajectory(source)
    page = episode_page(trajectory, None)
    for heading in ("Why points were lost: tasks", "Why points were lost: TA decisions", "Trust over time"):
        assert heading in page
    assert "expected ?" not in page and " at None" not in page
    first_task = trajectory["scores"]["tasks"][0]["task"]
    assert first_task in page


def test_report_totals_llm_usage_per_agent(two_folders, tmp_path):
    folder = tmp_path / "llm"
    shutil.copytree(two_folders / "b", folder)
    for path in (folder / "trajectories").rglob("*.json"):
        data = json.loads(path.read_text())
        data["llm_usage"] = {"prompt_tokens": 1200, "completion_tokens": 34, "total_tokens": 1234, "calls": 7,
                             "retries": 1, "no_tool_call": 2}
        path.write_text(json.dumps(data))
    out = tmp_path / "report"
    assert cli.main(["report", str(folder), "--out", str(out), "--episodes", "none"]) == 0
    page = (out / "index.html").read_text()
    assert "LLM usage" in page and "<td>1,234</td>" in page


@pytest.mark.parametrize("agent", ["policy-follower", "defer-all-but-most-urgent", "text-hold-while-more-urgent-0.15@09:00"])
def test_the_why_view_prints_each_decisions_real_outcome_and_each_needless_postponement(agent):
    """Issue 20 item 2 / round 20: a decision with nothing to postpone is won (and printed so, not
    'fail'); each task postponed needlessly is printed once, with when and why it resolved no
    clash; and TA's netting is spelled out — over every scenario, on real runs."""
    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import play
    from proactive_env.report.explain import explain
    from proactive_env.spec import shipped_names

    for name in shipped_names():
        run = play(make_agent(agent), name, "planner", 1000)
        scores, x = run["scores"], explain(run)
        shares = {d["id"]: d["J_share"] for d in scores["ta_decisions"]}
        for row in x.decisions:
            assert row.passed == (shares.get(row.decision, 0.0) > 0), (name, row.decision)
            if row.passed and not row.later:
                assert row.nothing_to_postpone and "nothing to postpone" in row.reason
        assert [n.task.split(" ")[0] for n in x.needless] == list(dict.fromkeys(
            t for t, _, _ in _scorer_needless(run))), name
        assert all(n.why and n.at.startswith("D") for n in x.needless)
        won = sum(row.passed for row in x.decisions)
        assert x.ta_netting.startswith(f"TA = max(0, {won} won − {len(scores['needless_postponements'])} task(s)")
        assert x.ta_netting.endswith(f"= {scores['TA']:.3f}")
        text = "\n".join(x.lines())
        assert text.count("needless postponement:") == len(scores["needless_postponements"])


def _scorer_needless(trajectory):
    """The (task, when, why) of each needless postponement, in order, from the benchmark's scorer."""
    from proactive_env.replay import scenario_of
    from proactive_env.scoring.metrics import RunScorer

    scorer = RunScorer(scenario_of(trajectory), trajectory["persona"])
    scorer.feed(trajectory["log"])
    return scorer.needless_why


def test_the_why_view_of_blind_round_20_prints_the_decision_with_nothing_to_postpone_as_won():
    """conference_trip/planner/1010 (blind round 20), its saved calls replayed: ta2 (the chair's
    reply done before the retime came) is won with nothing to postpone — once printed 'fail' while
    TA counted it — and the hotel decision is won by the postponement made with foresight, which
    is not needless. (Since suite 0.8.0 the player's deferral of Leo's meeting at D5 09:00, ta3's
    urgent side, is needless besides losing ta3: the one needless row, netted off TA.)"""
    from proactive_env.report.explain import explain
    from runs import played_case

    env = played_case("blind20-conference_trip-planner-1010")
    x = explain(env.trajectory(agent="blind-20b"))
    rows = {d.decision: d for d in x.decisions}
    assert rows["ta2_return_flight_before_lab"].passed and not rows["ta2_return_flight_before_lab"].later
    assert rows["ta2_return_flight_before_lab"].nothing_to_postpone
    assert rows["ta1_hotel_in_teaching_gap"].passed and not rows["ta3_leo_before_claim"].passed
    assert [row.task.split()[0] for row in x.needless] == ["t14_leo_meeting"]
    assert "  TA = max(0, 2 won − 1 task(s) postponed needlessly) / 3 counted decisions = 0.333" in x.lines()
