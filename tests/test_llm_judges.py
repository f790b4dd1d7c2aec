"""LLM judges against a scripted OpenAI-compatible server on loopback, with the real openai client."""

import json
import subprocess
import sys
from dataclasses import replace

import openai
import pytest
from openai_server import FakeOpenAI, Reply, tool_call

from proactive_env.spec import format_at

from proactive_env.baselines import make_agent
from proactive_env.cli import main
from proactive_env.evaluate import RunKey, evaluate, plan, run_record
from proactive_env.scoring import DIAGNOSTICS, RunScorer, Weights, aggregate, load_trajectory, score_log
from proactive_env.scoring.llm_judge import (
    CONSTRUCTS, JudgeError, LLMClient, LLMTAJudge, LLMTaskJudge, LLMTrustJudge, OpenAIJudgeConfig, last_seen_turns,
    rubric)
from proactive_env.rejudge import (
    agreement, agreement_table, openai_set, rejudge, rejudge_with, rubric_set, scenario_of)
from proactive_env.spec import SUITE_VERSION

# ------------------------------------------------------------------------------ scripted judges
KINDS = {rubric(name): name for name in ("tc-1", "tc-noop-1", "ta-1", "trj-1")}
QUOTABLE = {"tc-1": "## The assistant's work", "tc-noop-1": "## Evidence records",
            "ta-1": "## The assistant's log up to the window's end",
            "trj-1": "## The interaction history you have seen"}


def kind_and_quote(request: dict) -> tuple[str, str]:
    """Which judge asks, and a line of the quotable part of its input (as a faithful LLM would cite)."""
    kind = KINDS[request["messages"][0]["content"]]
    quotable = request["messages"][1]["content"].split(QUOTABLE[kind] + "\n", 1)[1]
    line = next(line for line in quotable.splitlines() if line.strip() and not line.startswith("#"))
    return kind, line.strip()[:60]


def scripted(score=1.0, now=True, later=True, continuation=1.0, rating=4):
    """A responder giving these verdicts, each citing the judge's own input."""
    def respond(request: dict) -> str:
        kind, quote = kind_and_quote(request)
        cite = {"quotes": [quote], "reason": "as cited"}
        if kind == "tc-1":
            return json.dumps({c: {"score": score, **cite} for c in DIAGNOSTICS})
        if kind == "tc-noop-1":
            return json.dumps({"abstention": {"score": score, **cite}})
        if kind == "ta-1":
            return json.dumps({"now": {"label": now, **cite}, "later": {"label": later, **cite},
                               "continuation": {"score": continuation, **cite}})
        return json.dumps({**dict.fromkeys(CONSTRUCTS, rating), **cite})
    return respond


# ------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def eval_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    evaluate(plan(["oracle", "random"], ["monitor"], ["reviewer", "operator"], range(1)), out, make_agent)
    return out


def trajectory_of(eval_dir, agent="oracle", persona="reviewer"):
    return load_trajectory(RunKey(agent, "monitor", persona, 0).path(eval_dir))


def outcome_of(trajectory, task):
    """What the run left for a task, as judges read it (computed from the saved log)."""
    scorer = RunScorer(scenario_of(trajectory), trajectory["persona"])
    scorer.feed(trajectory["log"])
    return scorer.work(task)


def task_of(scenario, task_id):
    return next(t for t in scenario.tasks if t.id == task_id)


def a_line(text: str) -> str:
    """A line of ``text`` to quote, as a faithful judge would."""
    return next(line for line in text.splitlines() if len(line.strip()) > 20).strip()[:50]


def llm(server, tmp_path, model="judge-a", **config):
    defaults = {"retries": 2, "backoff": 0.0, "timeout": 2.0, "cache_dir": tmp_path / "cache"}
    return LLMClient(OpenAIJudgeConfig(base_url=server.base_url, model=model, **{**defaults, **config}))


def task_verdict(quotes, scores=(1, 0.5, 1, 0)):
    return json.dumps({c: {"score": s, "quotes": quotes if s else [], "reason": "r"}
                       for c, s in zip(DIAGNOSTICS, scores)})


# ------------------------------------------------------------------------------ the server itself
def test_server_speaks_chat_completions_with_the_real_client(openai_server):
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0, timeout=0.5)
    openai_server.push("hello", [tool_call("read_record", {"record_id": "laptop_spec"})], Reply(status=429),
                       Reply(delay=3, content="late"), Reply(raw="<html>not json</html>"))
    ask = lambda: client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])  # noqa: E731
    first = ask()
    assert first.choices[0].message.content == "hello" and first.usage.total_tokens > 0
    call = ask().choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == ("read_record", {"record_id": "laptop_spec"})
    with pytest.raises(openai.RateLimitError):
        ask()
    with pytest.raises(openai.APITimeoutError):
        ask()
    with pytest.raises(ValueError):
        ask()
    assert [m.id for m in client.models.list()] == ["test-model"]
    assert len(openai_server.requests) == 5 and openai_server.requests[0]["messages"][0]["content"] == "hi"
    assert openai_server.seen[0].headers["authorization"] == "Bearer test"


# ------------------------------------------------------------------------------ TC judge
def test_valid_verdict_gives_its_diagnostics(openai_server, tmp_path, eval_dir, monitor):
    outcome = outcome_of(trajectory_of(eval_dir), "t02_port_check")
    task = task_of(monitor, "t02_port_check")
    record = next(r for r in monitor.records if r.id == outcome.observed[0])
    # one quote from the work, one from an observed record, with other whitespace and case
    quotes = [a_line(outcome.artifact).upper().replace(" ", "  ", 1), a_line(record.text)]
    openai_server.push(task_verdict(quotes))
    judge = LLMTaskJudge(llm(openai_server, tmp_path), monitor)
    assert judge.judge(task, outcome) == {"correctness": 1.0, "grounding": 0.5, "completeness": 1.0,
                                          "artifact_quality": 0.0}
    request = openai_server.requests[0]
    assert request["model"] == "judge-a" and request["temperature"] == 0
    assert request["response_format"] == {"type": "json_object"}
    assert request["messages"][0]["content"] == rubric("tc-1") and outcome.artifact in request["messages"][1]["content"]


def test_code_fenced_answer_is_accepted(openai_server, tmp_path, eval_dir, monitor):
    outcome = outcome_of(trajectory_of(eval_dir), "t02_port_check")
    openai_server.push("Here you go:\n```json\n" + task_verdict([a_line(outcome.artifact)]) + "\n```")
    judge = LLMTaskJudge(llm(openai_server, tmp_path), monitor)
    assert judge.judge(task_of(monitor, "t02_port_check"), outcome)["correctness"] == 1.0


@pytest.mark.parametrize("answers", [
    [task_verdict(["The laptop has a Thunderbolt 4 port"])] * 3,  # a quote not in the trajectory
    [task_verdict(["a"])] * 3,  # too short to check
    ["", Reply(raw="<html>bad gateway</html>"), '{"correctness": {"score": 1'],  # empty and malformed
    [json.dumps({"correctness": {"score": 1, "quotes": ["No HDMI port."]}})] * 3,  # criteria missing
    [task_verdict(["No HDMI port."], scores=(0.7, 1, 1, 1))] * 3,  # not 0, 0.5 or 1
    [task_verdict([], scores=(1, 1, 1, 1))] * 3,  # scores without quotes
    [Reply(raw='{"choices": []}')] * 3,  # a completion without a message
])
def test_bad_answers_are_retried_then_an_error(openai_server, tmp_path, eval_dir, monitor, answers):
    outcome = outcome_of(trajectory_of(eval_dir), "t02_port_check")
    openai_server.push(*answers)
    judge = LLMTaskJudge(llm(openai_server, tmp_path, retries=2), monitor)
    with pytest.raises(JudgeError, match="no valid verdict after 3 attempt"):
        judge.judge(task_of(monitor, "t02_port_check"), outcome)
    assert len(openai_server.requests) == 3
    assert not list((tmp_path / "cache").glob("*.json"))  # nothing invalid is cached


@pytest.mark.parametrize("failure", [Reply(status=500), Reply(status=429), Reply(delay=2)])
def test_transient_failure_then_valid_answer(openai_server, tmp_path, eval_dir, monitor, failure):
    outcome = outcome_of(trajectory_of(eval_dir), "t02_port_check")
    openai_server.push(failure, task_verdict([a_line(outcome.artifact)]))
    judge = LLMTaskJudge(llm(openai_server, tmp_path, timeout=0.3), monitor)
    assert judge.judge(task_of(monitor, "t02_port_check"), outcome)["correctness"] == 1.0
    first, second = openai_server.requests
    assert first == second  # exactly the same request again, nothing else


@pytest.mark.parametrize("status", [400, 401, 404])
def test_rejected_request_is_not_retried(openai_server, tmp_path, eval_dir, monitor, status):
    openai_server.push(Reply(status=status))
    judge = LLMTaskJudge(llm(openai_server, tmp_path), monitor)
    with pytest.raises(JudgeError, match=str(status)):
        judge.judge(task_of(monitor, "t02_port_check"), outcome_of(trajectory_of(eval_dir), "t02_port_check"))
    assert len(openai_server.requests) == 1


def test_cached_verdicts_are_not_requested_again(openai_server, tmp_path, eval_dir, monitor):
    outcome = outcome_of(trajectory_of(eval_dir), "t02_port_check")
    task = task_of(monitor, "t02_port_check")
    openai_server.responder = lambda request: task_verdict([a_line(outcome.artifact)])
    first = LLMTaskJudge(llm(openai_server, tmp_path), monitor).judge(task, outcome)
    again = LLMTaskJudge(llm(openai_server, tmp_path), monitor).judge(task, outcome)
    assert again == first and len(openai_server.requests) == 1
    LLMTaskJudge(llm(openai_server, tmp_path, model="judge-b"), monitor).judge(task, outcome)
    other_work = replace(outcome, artifact=outcome.artifact + "\nNo HDMI port.")
    LLMTaskJudge(llm(openai_server, tmp_path), monitor).judge(task, other_work)
    assert len(openai_server.requests) == 3  # another model, other work: asked anew


def test_noop_tasks_judge_the_abstention(openai_server, tmp_path, eval_dir, monitor):
    trajectory = trajectory_of(eval_dir)
    noop = outcome_of(trajectory, "t07_newsletter")
    task = task_of(monitor, "t07_newsletter")
    assert noop.noop and not noop.intervened
    openai_server.responder = scripted(score=0.5)
    judge = LLMTaskJudge(llm(openai_server, tmp_path), monitor)
    assert judge.judge(task, noop) == dict.fromkeys(DIAGNOSTICS, 0.5)
    assert KINDS[openai_server.requests[0]["messages"][0]["content"]] == "tc-noop-1"
    # no abstention to support, no work to judge: 0 without asking
    assert judge.judge(task, replace(noop, intervened=True)) == dict.fromkeys(DIAGNOSTICS, 0.0)
    no_work = replace(outcome_of(trajectory, "t02_port_check"), artifact="")
    assert judge.judge(task_of(monitor, "t02_port_check"), no_work) == dict.fromkeys(DIAGNOSTICS, 0.0)
    assert len(openai_server.requests) == 1


# ------------------------------------------------------------------------------ TA and TR-J judges
def test_ta_judge_labels_each_decision_from_the_log(openai_server, tmp_path, eval_dir, monitor):
    trajectory = trajectory_of(eval_dir)
    openai_server.responder = scripted(now=True, later=True, continuation=0.5)
    judge = LLMTAJudge(llm(openai_server, tmp_path))
    labels = judge.judge_ta(monitor, trajectory)
    eligible = [d["id"] for d in trajectory["scores"]["ta_decisions"]]
    assert list(labels) == eligible and len(eligible) >= 2
    assert all(v == {"now": True, "later": True, "continuation": 0.5} for v in labels.values())
    first = monitor.ta_decisions[0]
    shown = openai_server.requests[0]["messages"][1]["content"]
    assert first.urgent in shown and "trust_after" not in shown and "rules=" not in shown
    log = shown.split("## The assistant's log")[1]
    assert all(line.split("]")[0] < f"[{format_at(first.end)}" for line in log.splitlines() if line.startswith("["))
    openai_server.responder = scripted(now=True, later=False, continuation=1.0)
    judge = LLMTAJudge(llm(openai_server, tmp_path, model="judge-b"))
    assert all(v == {"now": True, "later": False, "continuation": 0.0}  # no deferral, no continuation
               for v in judge.judge_ta(monitor, trajectory).values())


def test_trust_judge_rates_each_task_the_user_saw(openai_server, tmp_path, eval_dir, monitor):
    trajectory = trajectory_of(eval_dir)
    seen = last_seen_turns(trajectory)
    openai_server.responder = lambda request: json.dumps({
        "understandability": 5, "technical_competence": 4, "reliability": 4, "personal_attachment": 3, "faith": 4,
        "reason": "fine", "quotes": [kind_and_quote(request)[1]]})
    ratings = LLMTrustJudge(llm(openai_server, tmp_path)).rate(monitor, trajectory)
    assert ratings == dict.fromkeys(seen, 4.0) and len(openai_server.requests) == len(seen)
    earliest = min(seen, key=seen.get)
    request = next(r for r in openai_server.requests
                   if task_of(monitor, earliest).title in r["messages"][1]["content"].split("##")[3])
    history = request["messages"][1]["content"].split("## The interaction history you have seen\n")[1]
    later_events = [e["id"] for e in trajectory["log"] if e["type"] == "event" and e["t"] > seen[earliest]]
    assert later_events and not any(f"({i})" in history for i in later_events)  # only up to the task's last turn
    assert "type=read" not in history and "note:" not in history and "trust" not in history  # private and simulator state hidden
    openai_server.responder = lambda request: json.dumps({**dict.fromkeys(CONSTRUCTS, 6), "reason": "x",
                                                          "quotes": [kind_and_quote(request)[1]]})
    with pytest.raises(JudgeError, match="less than or equal to 5"):
        LLMTrustJudge(llm(openai_server, tmp_path, model="judge-b", retries=0)).rate(monitor, trajectory)


# ------------------------------------------------------------------------------ several judges
def test_rubric_judge_set_reproduces_the_recorded_scores(eval_dir):
    for agent in ("oracle", "random"):
        trajectory = trajectory_of(eval_dir, agent)
        assert rejudge_with(trajectory, [rubric_set()]) == trajectory["scores"]
        assert rejudge(trajectory) == trajectory["scores"]


def test_two_judges_are_averaged(openai_server, tmp_path, eval_dir):
    judges = {"judge-a": scripted(score=1.0, now=True, later=True, continuation=1.0, rating=5),
              "judge-b": scripted(score=0.0, now=True, later=False, continuation=0.0, rating=3)}
    openai_server.responder = lambda request: judges[request["model"]](request)
    config = {"cache_dir": tmp_path / "cache", "retries": 0, "backoff": 0.0}
    sets = [openai_set(openai_server.base_url, model, **config) for model in judges]
    trajectory = trajectory_of(eval_dir)
    scores = rejudge_with(trajectory, sets)
    seen = last_seen_turns(trajectory)
    for task in scores["tasks"]:
        work = outcome_of(trajectory, task["task"])
        worked = work.artifact if not work.noop else not work.intervened
        assert task["diagnostics"] == dict.fromkeys(DIAGNOSTICS, 0.5 if worked else 0.0)
        assert task["TR_J"] == (4.0 if task["task"] in seen else None)
    assert (scores["now"], scores["later"], scores["TA"], scores["continuation"]) == (1.0, 0.0, 0.0, 0.5)
    # with the rubric: its diagnostics, the scorer's TA rules and estimator averaged in
    mixed = rejudge_with(trajectory, [rubric_set(), sets[0]])
    assert mixed["TA"] == 1.0 and mixed["continuation"] == 1.0
    estimator = {t["task"]: t["TR_J"] for t in trajectory["scores"]["tasks"]}
    assert all(t["TR_J"] == pytest.approx((estimator[t["task"]] + 5) / 2) for t in mixed["tasks"] if t["TR_J"])


def test_agreement_on_a_constructed_example():
    result = agreement([1, 2, 2, 3], [1, 3, 2, 10])
    # Pearson 9/√(2·50); ranks (1, 2.5, 2.5, 4) vs (1, 3, 2, 4): 4.5/√(4.5·5); Δ = mean(b − a)
    assert result == pytest.approx({"pearson": 0.9, "spearman": 3 / 10 ** 0.5, "mean_delta": 2.0})
    assert agreement([1, 2, 3], [3, 2, 1])["spearman"] == pytest.approx(-1.0)
    assert all(v != v for k, v in agreement([1, 1, 1], [1, 2, 3]).items() if k != "mean_delta")  # NaN: constant
    with pytest.raises(ValueError):
        agreement([1, 2], [1, 2, 3])
    rows = agreement_table({"a": [{"TC": 10, "TA": 0, "TR_J": 3}, {"TC": 20, "TA": 1, "TR_J": 4}],
                            "b": [{"TC": 30, "TA": 0, "TR_J": 2}, {"TC": 50, "TA": 1, "TR_J": 4}]})
    assert [(r["metric"], r["pearson"], r["mean_delta"]) for r in rows] == [("TC", 1.0, 25.0), ("TA", 1.0, 0.0),
                                                                           ("TR_J", 1.0, -0.5)]


# ------------------------------------------------------------------------------ the rescore CLI
def test_rescore_with_the_rubric_reproduces_results(eval_dir, tmp_path, capsys):
    out = tmp_path / "rescored.json"
    assert main(["rescore", str(eval_dir), "--judge", "rubric", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads((eval_dir / "results.json").read_text())
    assert "rescored 4 runs" in capsys.readouterr().out


class _Half:
    """What the scripted LLM's TC verdicts amount to (0 without work, as the LLM judge rules say)."""

    name, rubric_version = "half", "test"

    def judge(self, task, work):
        skip = (work.noop and work.intervened) or (not work.noop and not work.artifact)
        return dict.fromkeys(DIAGNOSTICS, 0.0 if skip else 0.5)


def test_rescore_with_a_scripted_llm_judge(openai_server, eval_dir, tmp_path, capsys):
    openai_server.responder = scripted(score=0.5, now=True, later=False, rating=3)
    out = tmp_path / "rescored.json"
    judge = f"openai:judge-a@{openai_server.base_url}"
    argv = ["rescore", str(eval_dir), "--judge", judge, "--cache", str(tmp_path / "cache"), "--out", str(out)]
    assert main(argv) == 0
    records = []
    for path in sorted((eval_dir / "trajectories").rglob("*.json")):
        t = load_trajectory(path)
        ta = {d["id"]: {"now": True, "later": False, "continuation": 0.0} for d in t["scores"]["ta_decisions"]}
        scores = score_log(scenario_of(t), t["persona"], t["log"], Weights(), [_Half()],
                           dict.fromkeys(last_seen_turns(t), 3.0), ta)
        records.append(run_record(RunKey(t["agent"], t["scenario"], t["persona"], t["seed"]), {"scores": scores}))
        assert {task["TR_J"] for task in scores["tasks"] if task["TR_J"] is not None} == {3.0}  # every task the user saw
    expected = [{**row, "suite_version": SUITE_VERSION} for row in aggregate(records, ("agent", "scenario", "persona"))]
    rows = json.loads(out.read_text())["rows"]
    assert rows == expected and all(r["TA"] == 0.0 for r in rows)
    asked = len(openai_server.requests)
    # with the rubric too: averaged, an agreement table, and no LLM request asked twice
    assert main(argv + ["--judge", "rubric"]) == 0
    printed = capsys.readouterr().out
    assert "Pearson" in printed and "openai:judge-a" in printed and "TR_J" in printed
    assert len(openai_server.requests) == asked
    mixed = json.loads(out.read_text())["rows"]
    original = json.loads((eval_dir / "results.json").read_text())["rows"]
    # TR-J is a mean over fixed tasks, linear in each task's rating: averaging judges averages the runs' TR-J
    assert [m["TR_J"] for m in mixed] == pytest.approx([(o["TR_J"] + r["TR_J"]) / 2 for o, r in zip(original, rows)],
                                                       abs=0.01)


def test_rescore_against_an_endpoint_that_times_out(eval_dir, tmp_path):
    answered = []

    def respond(request):  # a few verdicts, then the endpoint hangs
        answered.append(1)
        return scripted()(request) if len(answered) <= 3 else Reply(delay=5)

    out = tmp_path / "rescored.json"
    with FakeOpenAI(respond) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_env.cli", "rescore", str(eval_dir), "--judge",
             f"openai:judge-a@{server.base_url}", "--timeout", "0.3", "--retries", "1", "--backoff", "0",
             "--cache", str(tmp_path / "cache"), "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "timed out" in proc.stderr and "openai:judge-a" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert len(list((tmp_path / "cache").glob("*.json"))) == 3 and not out.exists()  # verdicts so far kept


def test_rescore_against_an_unreachable_endpoint(eval_dir, tmp_path, capsys):
    with FakeOpenAI() as server:
        url = server.base_url  # closed on leaving: nothing listens there any more
    argv = ["rescore", str(eval_dir), "--judge", f"openai:judge-a@{url}", "--retries", "0",
            "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "r.json")]
    assert main(argv) == 1
    assert "Connection error" in capsys.readouterr().err
    assert main(["rescore", str(eval_dir), "--judge", "openai:no-url", "--out", str(tmp_path / "r.json")]) == 2
