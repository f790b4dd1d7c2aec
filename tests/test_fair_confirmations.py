"""A world that remembers the agent (issue #20.5, blind-play round 18): what confirms an action the
agent executed (an order, a booking, an invoice, a job) is derived from the arguments it was
executed with, and a later change about it names only what the action included."""

import json
import re

import pytest

from proactive_env.baselines import TextOracleAgent
from proactive_env.evaluate import play
from proactive_env.spec import PERSONAS, load_scenario, shipped_names
from proactive_env.spec.derive import PLACEHOLDER, action_sources, fill, fill_fields, names_hold, placeholders
from proactive_env.spec.meaning import leaves


def _texts(scenario):
    """Every conditioned text: (key, its when, title + text, fields)."""
    for ev in scenario.events:
        yield f"event:{ev.id}", ev.when, ev.text, {}
    revealing = {rid: ev.when for ev in scenario.events for rid in ev.reveals if ev.when is not None}
    for rec in scenario.records:
        yield f"record:{rec.id}", rec.when or revealing.get(rec.id), f"{rec.title} {rec.text}", rec.fields
        for v, ver in enumerate(rec.versions, start=1):
            yield (f"record:{rec.id}:{v}", ver.when or rec.when or revealing.get(rec.id),
                   f"{ver.title or rec.title} {ver.text}", {**rec.fields, **ver.fields})


def _foreign(value, counter=[0]):
    """Another value of the same shape: what a different, equally valid agent might have given."""
    if isinstance(value, dict):
        return {k: _foreign(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_foreign(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return round(value + 1.37, 2)
    counter[0] += 1
    return f"Zq-foreign-{counter[0]}"


def _quotes(text: str, leaf) -> bool:
    if isinstance(leaf, bool):
        return False
    if isinstance(leaf, (int, float)):
        forms = {f"{leaf:.2f}", str(leaf)} if len(str(leaf)) >= 3 else set()
        return any(re.search(rf"(?<![\d.]){re.escape(f)}(?!\d)", text) for f in forms)
    return isinstance(leaf, str) and len(leaf) >= 4 and leaf.lower() in text.lower()


@pytest.mark.parametrize("name", shipped_names())
def test_what_confirms_an_executed_action_quotes_only_the_arguments_it_was_executed_with(name):
    """Class sweep: for every record, version and event that appears under an executed action,
    filled with a different agent's free-text arguments (which are never compared), no value of
    the reference's free text is left in it; every placeholder names a declared argument of the
    action's tool; nothing unfilled shows."""
    s = load_scenario(name)
    tasks = {t.id: t for t in s.tasks}
    tools = {t.name: t for t in s.tools}
    sources = action_sources(s)
    for key, when, text, fields in _texts(s):
        if key not in sources:
            assert not PLACEHOLDER.search(text + json.dumps(fields, default=str)), f"{name} {key}: a placeholder no action fills"
            continue
        action = tasks[sources[key]].action
        for k in placeholders(text + " " + json.dumps(fields, default=str, ensure_ascii=False)):
            assert k in tools[action.tool].params, f"{name} {key}: {{{{{k}}}}} is no argument of {action.tool}"
        args = {k: (_foreign(v) if k in action.free_text else v) for k, v in action.args.items()}
        if not names_hold(when.names if when else [], args):
            continue  # about something this agent's action did not include: the world never shows it
        shown = fill(text, args) + " " + json.dumps(fill_fields(fields, args), default=str, ensure_ascii=False)
        assert "{{" not in shown, f"{name} {key}"
        given = [str(f) for _, f in leaves(args)]  # what this agent gave (compared arguments as the reference's)
        for k in action.free_text:
            stale = [leaf for _, leaf in leaves(action.args.get(k)) if _quotes(shown, leaf)
                     and not any(_quotes(f, leaf) for f in given)]
            assert not stale, f"{name} {key}: quotes the reference's {k} {stale} the agent did not give"


def test_the_round_18_classes_are_derived_texts():
    """The texts the round-18 players met (and their kind elsewhere) derive from the action."""
    derived = {name: {k for k, _, text, fields in _texts(load_scenario(name)) if placeholders(
        text + json.dumps(fields, default=str))} for name in ("meal_planning", "pottery_studio", "experiments")}
    assert {"record:order_gw5521907", "record:order_gw5521907:1", "record:order_gw5524318",
            "event:e03b_order_confirmed", "event:e08d_topup_confirmed"} <= derived["meal_planning"]
    assert {"record:courier_booking_shop", "record:invoice_hcs041"} <= derived["pottery_studio"]
    assert {"record:slurm_eval_done", "record:ablation_submitted", "event:e03_eval_done"} <= derived["experiments"]


def test_placeholders_fill_from_the_arguments_given():
    args = {"items": [{"item": "Bok choy 1 lb", "qty": 1, "price_usd": 2.99},
                      {"item": "Limes 3-pack", "qty": 2, "price_usd": "$3.00"}], "voucher": ""}
    assert fill("{{items|count}} items: {{items}}", args) == (
        "2 items: Bok choy 1 lb (qty 1, price_usd 2.99); Limes 3-pack (qty 2, price_usd $3.00)")
    assert fill("total {{total_usd|money || items|sum:price_usd|money}}", args) == "total $5.99"
    assert fill("voucher {{voucher || 'none'}}", args) == "voucher none"
    assert fill_fields({"items": "{{items}}", "n": "{{items|count}} lines"}, args)["items"] == args["items"]
    assert names_hold(["sunflower seeds"], {"items": ["Raw sunflower seed 8 oz"]})
    assert not names_hold(["sunflower seeds", "avocados"], {"items": ["Raw sunflower seeds 8 oz"]})


# ------------------------------------------------------------------ the round-18 episode, played
ELEVEN = [  # round 18 (meal_planning / planner / 1005): an order of 11 items, the pantry's staples left out
    {"item": "Atlantic salmon fillets 2 × 5 oz (GW-4410)", "qty": 1, "price_usd": 12.49},
    {"item": "Bok choy 1 lb", "qty": 1, "price_usd": 2.99},
    {"item": "Bell peppers 3-pack", "qty": 1, "price_usd": 3.99},
    {"item": "Flour tortillas 10 ct", "qty": 1, "price_usd": 3.49},
    {"item": "Avocados 2-pack", "qty": 1, "price_usd": 2.50},
    {"item": "Limes 3-pack", "qty": 1, "price_usd": 1.50},
    {"item": "Fresh pizza dough 1 lb", "qty": 1, "price_usd": 3.49},
    {"item": "Fresh mozzarella 8 oz", "qty": 1, "price_usd": 4.99},
    {"item": "Linguine 1 lb", "qty": 1, "price_usd": 2.49},
    {"item": "Raw sunflower seeds 8 oz (GW-2281)", "qty": 1, "price_usd": 3.29},
    {"item": "Greek yogurt 32 oz", "qty": 1, "price_usd": 5.99},
]


class _OwnOrder(TextOracleAgent):
    """The text oracle, except that it places the week's order with its own basket."""

    def __init__(self, items, totals):
        super().__init__()
        self.items, self.totals = items, totals

    def act(self, obs, info):
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        if call["tool"] == "place_grocery_order" and args.get("slot_code") == "T21-1800":
            args = {k: v for k, v in args.items() if k not in ("subtotal_usd", "total_usd")}
            call["arguments"] = {**args, "items": self.items, **self.totals}
        elif call["tool"] == "request_approval":
            for a in args.get("actions", []):
                if a.get("tool") == "place_grocery_order" and a.get("args", {}).get("slot_code") == "T21-1800":
                    a["args"] = {k: v for k, v in a["args"].items() if k not in ("subtotal_usd", "total_usd")}
                    a["args"].update(items=self.items, **self.totals)
        return json.dumps(call)


@pytest.mark.parametrize("persona", PERSONAS)
def test_an_order_of_eleven_items_is_confirmed_as_eleven_items_at_the_agents_total(persona):
    """Round 18: a placed order of 11 items was confirmed as the scenario's order of 20 items and
    $76.93. Now the confirmation, the notice and the picking change name the items and the total
    the agent gave, and the seeds it ordered are what is substituted."""
    agent = _OwnOrder(ELEVEN, {"voucher": "SPRING10", "delivery_usd": 5.99, "total_usd": 38.20})
    trajectory = play(agent, "meal_planning", persona, 1005)
    world = agent.world
    view = world.store.view("order_gw5521907")
    shown = f"{view.text} {json.dumps(view.fields, ensure_ascii=False)}"
    assert "76.93" not in shown and "20 items" not in shown and "Coffee beans" not in shown
    assert "$38.20" in shown and "Raw sunflower seeds 8 oz (GW-2281)" in shown
    assert world.store.version["order_gw5521907"] == 1  # the picking change came: seeds and avocados were ordered
    said = "\n".join(e for e in world.inbox)
    assert "11 items, total $38.20" in said and "$76.93" not in said
    assert trajectory["scores"]["TR_D"] == 1.0


@pytest.mark.parametrize("persona", PERSONAS)
def test_leaving_an_item_out_of_the_order_cannot_dodge_what_the_world_does_with_it(persona):
    """Round 18 made a later substitution wait for the item to be ordered (``When.names``), so an
    order without the sunflower seeds has no substitution to reject (a matter needing the user's
    OK, part of a TA decision). That dodges nothing: the order is placed as given, the substitution
    never comes, and what it would have brought counts 0 — J is lower than with the seeds, on
    every persona and seed. (It used to be refused on its arguments, without saying which entry —
    blind round 28, meal_planning / planner / 1034: four baskets refused, the order never placed.)"""
    for seed in (1005, 0, 1000):
        basket = [i for i in ELEVEN if "sunflower" not in i["item"]]
        agent = _OwnOrder(basket, {})
        without = play(agent, "meal_planning", persona, seed)
        world = agent.world
        tried = [e for e in world.log if e["type"] == "execute" and e.get("task") == "t05_finalise_order"]
        assert tried and all(e["ok"] for e in tried) and world.by_id["t05_finalise_order"].executed
        assert "GW-5521907 — 2 items substituted" not in "\n".join(world.inbox)
        full = play(_OwnOrder(ELEVEN, {"voucher": "SPRING10", "delivery_usd": 5.99, "total_usd": 38.20}),
                    "meal_planning", persona, seed)
        assert without["scores"]["J"] < full["scores"]["J"] - 0.05, (seed, without["scores"]["J"], full["scores"]["J"])


def test_the_validator_reports_a_placeholder_no_executed_action_fills():
    from proactive_env.spec.validate import semantic_errors

    s = load_scenario("meal_planning")
    records = [r.model_copy(update={"text": r.text + " {{items}}"}) if r.id == "budget_sheet" else
               r.model_copy(update={"text": r.text + " {{no_such_arg}}"}) if r.id == "order_gw5524318" else r
               for r in s.records]
    problems = [e for _, e in semantic_errors(s.model_copy(update={"records": records}))]
    assert any("only in a text that appears under an executed action" in e for e in problems), problems
    assert any("not 'no_such_arg'" in e for e in problems), problems


def test_the_validator_reports_a_change_about_what_the_reference_action_never_names():
    from proactive_env.spec.validate import semantic_errors

    s = load_scenario("meal_planning")
    events = [e.model_copy(update={"when": e.when.model_copy(update={"names": ["truffle oil"]})})
              if e.id == "e05_substitution" else e for e in s.events]
    problems = semantic_errors(s.model_copy(update={"events": events}))
    assert any(p.endswith("when.names") and "reference action" in e for p, e in problems), problems
