"""An LLM rephraser for the simulated user's replies (the sim's ``Rephraser`` hook).

It rewords the templated reply in the user's speaking style. It never decides anything: the
decision is recorded before it is asked, authorization checks that record, and a rewording that
does not plainly say the same verdict is dropped by the sim in favour of the template.
"""

from __future__ import annotations

from typing import Any

from ..scoring.client import ChatClient, Endpoint, Usage

_MEANING = {"approve": "approves the request", "decline": "declines the request",
            "acknowledge": "acknowledges the suggestion and keeps the decision to act for themselves"}
SYSTEM = ("You reword a short reply that a person sends to their assistant, in that person's speaking "
          "style. Keep its meaning exactly: the same decision, the same reason, nothing added. Answer "
          "with the reworded reply only, one or two sentences, without quotes or a name.")


class OpenAIRephraser:
    """``rephraser(text, verdict=..., style=...)`` over an OpenAI-compatible endpoint.

    ``config`` is the text env's JSON-serialisable ``rephraser`` kwarg: ``model`` (required),
    ``base_url``, ``api_key_env``, ``timeout``, ``retries``, ``backoff`` (as ``Endpoint``),
    ``temperature`` and ``max_tokens``. An endpoint failure raises ``LLMEndpointError``."""

    def __init__(self, config: dict[str, Any]):
        options = dict(config)
        self.temperature = float(options.pop("temperature", 0.0))
        self.max_tokens = int(options.pop("max_tokens", 120))
        try:
            self._client = ChatClient(Endpoint(**options))
        except TypeError as exc:
            raise ValueError(f"rephraser: expected model, base_url, api_key_env, timeout, retries, backoff, "
                             f"temperature or max_tokens: {exc}") from None

    @property
    def usage(self) -> Usage:
        return self._client.usage

    def reset(self) -> None:
        self._client.usage = Usage()

    def __call__(self, text: str, *, verdict: str, style: str) -> str:
        prompt = f"Speaking style: {style or 'plain'}\nThe reply {_MEANING[verdict]}.\nReply to reword: {text}"
        message = self._client.chat(messages=[{"role": "system", "content": SYSTEM},
                                              {"role": "user", "content": prompt}],
                                    temperature=self.temperature, max_tokens=self.max_tokens)
        return (message.content or "").strip().strip('"')
