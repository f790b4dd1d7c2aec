"""``variant.draw`` takes a seed's jitter offsets in one vectorised call (issue #21.4: reset time).
That is only a speed-up if it is the very same draw: the offsets, and the generator's state after
them (every later choice of the variant — rules, distractors, orders, the user's coins — reads on
from there), must be those of drawing each offset in turn, as the draw did before. Every shipped
scenario and persona, at the seeds of both splits."""

from __future__ import annotations

import numpy as np
import pytest

from proactive_env.spec import PERSONAS, load_scenario, shipped_names, variant


def _draw_one_at_a_time(s, persona: str, rng: np.random.Generator) -> dict:
    """``variant.draw`` as it was before: one ``integers`` call per moved event and record."""
    jitter, offsets = s.variants.jitter // variant.STEP, {}
    if jitter:
        for ev in s.events:
            if ev.when is None:
                offsets[ev.id] = variant.STEP * int(rng.integers(-jitter, jitter + 1))
        revealed = {r for ev in s.events for r in ev.reveals}
        for rec in s.records:
            if rec.when is None and rec.appears is not None and rec.id not in revealed:
                offsets[rec.id] = variant.STEP * int(rng.integers(-jitter, jitter + 1))
    rules = dict(s.personas[persona].rules)
    for category, options in sorted(s.variants.rules.get(persona, {}).items()):
        choices = sorted({rules[category], *options})
        rules[category] = choices[int(rng.integers(len(choices)))]
    dropped = [t for t in s.variants.distractors if rng.random() < 0.5]
    kept = [t.id for t in s.tasks if t.id not in dropped]
    task_order = [kept[i] for i in rng.permutation(len(kept))]
    record_order = [s.records[i].id for i in rng.permutation(len(s.records))]
    return {"offsets": offsets, "rules": rules, "tasks": task_order, "records": record_order,
            "coins": variant.coins(s, rng)}


@pytest.mark.parametrize("scenario", shipped_names())
def test_the_jitter_is_drawn_as_one_draw_per_item_would_draw_it(scenario):
    s = load_scenario(scenario)
    for persona in PERSONAS:
        for seed in (0, 1, 1000, 1001):
            rng, reference = np.random.default_rng(seed), np.random.default_rng(seed)
            drawn = variant.draw(s, persona, rng)
            assert drawn == _draw_one_at_a_time(s, persona, reference), (persona, seed)
            assert any(drawn["offsets"].values()) or not s.variants.jitter  # (the jitter does move things)
            assert rng.bit_generator.state == reference.bit_generator.state, (persona, seed)
