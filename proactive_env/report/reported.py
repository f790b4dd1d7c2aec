"""Reference rows: model figures the Proactivity-Gym paper states in its text (not re-run here).

Only numbers the paper's text states for a model configuration are included; a metric it does
not state for that configuration is None ("n/a"). Each row quotes where the number comes from.
TA and TR-D are converted from the paper's % to this package's data scale (fractions).
"""

from __future__ import annotations

REPORTED = (
    {"agent": "Claude Opus 5 (reported)",
     "scores": {"TC": 65.1, "TA": 0.517, "TR_D": 0.524, "TR_J": 4.25, "J": None, "continuation": 0.5069},
     "source": "paper, results on Fig. 6(a): 'Claude Opus 5 achieves the highest average TC score of 65.1, but "
               "reaches only 51.7% on TA and 52.4% on TR-D'; appendix on under-intervention: 'its overall TR-J of "
               "4.25'; appendix on TA (Table 9): 'Claude Opus 5 scores 50.69 on continuation quality'"},
    {"agent": "GPT 5.6 Sol + Codex, no reasoning (reported)",
     "scores": {"TC": 49.96, "TA": 0.10, "TR_D": None, "TR_J": None, "J": None, "continuation": None},
     "source": "paper App. F.2 (Fig. 10): 'TC scores increase from 49.96 (no reasoning) ... TA increases from "
               "10%'"},
    {"agent": "GPT 5.6 Sol + Codex, xhigh reasoning (reported)",
     "scores": {"TC": 58.93, "TA": 0.172, "TR_D": None, "TR_J": None, "J": None, "continuation": None},
     "source": "paper App. F.2 (Fig. 10): 'to 58.93 (extra-high), TA increases from 10% to 17.2%'"},
)
NOTE = ("Reported rows are figures stated in the Proactivity-Gym paper for LLM agents in their own harnesses, "
        "on the paper's scenarios and judges; they were not re-run here and are not comparable run for run. "
        "n/a: the paper's text states no figure for that configuration.")
