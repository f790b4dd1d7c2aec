"""A chat client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, ...), shared by the LLM
judges, the LLM agent and the user-reply rephraser: retries with exponential backoff, token
accounting, and one clear failure (``LLMEndpointError``) once the retries are spent. It lives in
the lowest layer that calls a model (scoring's judges); the faces and baselines above reuse it.

``openai`` is imported only when a client is made, so the package works without the ``llm`` extra.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import Any

# Statuses worth another attempt: timeouts, conflicts, rate limits and server errors. Any other
# HTTP error (bad request, authentication, unknown model) fails at once — retrying cannot help.
RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MAX_BACKOFF = 30.0


class LLMEndpointError(RuntimeError):
    """An endpoint that gave no usable answer; the message is one line naming endpoint, model and
    error. ``transient`` tells whether another attempt later could succeed."""

    def __init__(self, message: str, transient: bool):
        super().__init__(message)
        self.transient = transient


@dataclass
class Usage:
    """Token accounting over one run (from each response's ``usage``) plus calls and retries."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0
    retries: int = 0

    def add(self, usage: Any) -> None:
        self.calls += 1
        if usage is not None:  # some servers omit it
            self.prompt_tokens += usage.prompt_tokens or 0
            self.completion_tokens += usage.completion_tokens or 0
            self.total_tokens += usage.total_tokens or 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach a model; JSON-serialisable, so it can be an env kwarg or a record."""

    model: str
    base_url: str | None = None  # None: the openai client's default (OPENAI_BASE_URL or api.openai.com)
    api_key_env: str = "OPENAI_API_KEY"  # unset: "EMPTY", which local servers accept
    timeout: float = 60.0  # seconds per attempt
    retries: int = 3  # attempts after the first
    backoff: float = 1.0  # seconds before the first retry, doubling after each

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("expected a model name")
        if self.timeout <= 0 or self.retries < 0 or self.backoff < 0:
            raise ValueError(f"expected timeout > 0, retries >= 0 and backoff >= 0, got {self.timeout}, "
                             f"{self.retries}, {self.backoff}")


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"HTTP {status}: {text}" if status else f"{type(exc).__name__}: {text}"


class ChatClient:
    """``chat(**request)`` → the first choice's message, with retries; ``usage`` accumulates."""

    def __init__(self, endpoint: Endpoint):
        try:
            import openai
        except ImportError:
            raise ImportError("LLM agents, judges and the rephraser need openai: pip install 'proactivity-gym[llm]'",
                              name="openai") from None
        self.endpoint = endpoint
        self.usage = Usage()
        self._openai = openai
        self._client = openai.OpenAI(base_url=endpoint.base_url, api_key=os.environ.get(endpoint.api_key_env) or "EMPTY",
                                     timeout=endpoint.timeout, max_retries=0)  # retries are counted here

    @property
    def where(self) -> str:
        return str(self._client.base_url).rstrip("/")

    def chat(self, **request: Any) -> Any:
        ep, openai = self.endpoint, self._openai
        last: BaseException = ValueError("no attempt made")
        for attempt in range(ep.retries + 1):
            if attempt:
                self.usage.retries += 1
                time.sleep(min(MAX_BACKOFF, ep.backoff * 2 ** (attempt - 1)))
            try:
                response = self._client.chat.completions.create(model=ep.model, **request)
            except openai.APIStatusError as exc:
                if exc.status_code not in RETRY_STATUS:
                    raise self._failure(exc, "", transient=False) from None
                last = exc
                continue
            except (openai.APIError, ValueError) as exc:  # refused, timed out, unreadable body
                last = exc
                continue
            choices = getattr(response, "choices", None)  # a body that is not a completion has none
            if choices:
                self.usage.add(getattr(response, "usage", None))
                return choices[0].message
            last = ValueError("the response has no choices")
        raise self._failure(last, f" after {ep.retries + 1} attempts", transient=True)

    def _failure(self, exc: BaseException, attempts: str, transient: bool) -> LLMEndpointError:
        return LLMEndpointError(f"LLM endpoint {self.where} (model {self.endpoint.model!r}) failed{attempts}: "
                                f"{_describe(exc)}", transient)
