"""A chat client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, ...), shared by the LLM
judges, the LLM agent and the user-reply rephraser: retries with jittered exponential backoff
(``tenacity``) that honour the server's ``Retry-After``, a total deadline per attempt (a server that
trickles its answer cannot hold a request past ``timeout``), token accounting, and one clear
failure (``LLMEndpointError``) once the retries are spent. Credentials are never stored or
printed: a URL with a user or password is refused (``check_url``), the key is named only by its
environment variable, and every message and stored setting passes through ``redact``, which masks
URLs and every credential value read, raw, URL-encoded and base64.
It lives in the lowest layer that calls a model (scoring's judges); the faces and baselines above
reuse it.

``openai`` and ``tenacity`` are imported only when a client is made, so the package works without
the ``llm`` extra.
"""

from __future__ import annotations

import base64
import email.utils
import math
import os
import re
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

# Statuses worth another attempt: timeouts, conflicts, rate limits and server errors. Any other
# HTTP error (bad request, authentication, unknown model) fails at once — retrying cannot help.
RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MAX_BACKOFF = 30.0  # seconds: the longest jittered wait between attempts
MAX_RETRY_AFTER = 120.0  # seconds: a server asking for a longer pause fails the request at once


def redact_url(url: str | None) -> str | None:
    """``url`` without credentials: user and password dropped, query and fragment replaced."""
    if not url:
        return url
    url = str(url)
    head, query_mark, tail = url.partition("?")
    if "@" in head:  # userinfo, however malformed ('/' or '?' in a password): all of it up to the last '@'
        scheme, _, rest = head.partition("://")
        url = f"{scheme}://{rest.rsplit('@', 1)[1]}{query_mark}{tail}"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:  # IPv6
            host = f"[{host}]"
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "<unparsable URL>"
    query = "<redacted>" if parts.query else ""
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


# A URL as far as it can reach in running text. Userinfo may hold any character but '@' ends it,
# so the match runs through the last '@' before the host (a password with '"' or '/' is covered).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^\s@]*@)?[^\s'\"<>]+")
_SECRETS: set[str] = set()  # every credential value this process has read (see ``register_secret``)
_secrets_lock = threading.Lock()
MIN_SECRET = 4  # shorter values ("EMPTY" is longer) would mask ordinary words


def register_secret(value: str | None) -> None:
    """Remember a credential value so that ``redact`` masks it wherever it appears later."""
    if value and len(value) >= MIN_SECRET and value != "EMPTY":
        with _secrets_lock:
            _SECRETS.add(value)


def _base64_cores(secret: bytes) -> set[str]:
    """The characters that any base64 encoding of a text containing ``secret`` must hold, at each
    of the three alignments (standard and URL-safe alphabets): a Basic header's ``user:password``
    encodes the password at an offset."""
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode().rstrip("=")
        # The first group mixes in the padding bytes and the last may mix in what follows.
        start = 4 if offset else 0
        end = len(encoded) - (len(encoded) % 4 or 4)
        core = encoded[start:end]
        if len(core) >= MIN_SECRET:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def secret_forms(secret: str) -> set[str]:
    """The forms in which ``secret`` may be printed as is: raw and URL-encoded."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret), quote(secret)}
    return {f for f in forms if len(f) >= MIN_SECRET}


def _masks(secrets: set[str]) -> list[re.Pattern]:
    plain = set().union(*(secret_forms(s) for s in secrets)) if secrets else set()
    cores = set().union(*(_base64_cores(s.encode()) for s in secrets)) if secrets else set()
    # A base64 core is masked with its neighbours: the characters at either end carry bits of it.
    b64 = [re.compile(f"[A-Za-z0-9+/_-]{{0,4}}{re.escape(c)}[A-Za-z0-9+/_-]{{0,4}}=*")
           for c in sorted(cores, key=len, reverse=True)]
    return [re.compile(re.escape(f)) for f in sorted(plain, key=len, reverse=True)] + b64


def redact(text: object, secrets: tuple[str, ...] = ()) -> str:
    """``text`` fit to print or store: URLs without credentials or queries, and every credential
    value (given here or registered) masked in its raw, URL-encoded and base64 forms. The one
    redaction every error message, manifest entry and log line goes through."""
    text = _URL.sub(lambda m: redact_url(m.group(0)) or "", str(text))
    with _secrets_lock:
        known = {*_SECRETS, *(s for s in secrets if s and len(s) >= MIN_SECRET)}
    for mask in _masks(known):
        text = mask.sub("***", text)
    return _BASE64_TOKEN.sub(lambda m: _mask_decoded(m.group(0), known), text) if known else text


_BASE64_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{4,}={0,2}")


def _mask_decoded(token: str, secrets: set[str]) -> str:
    """``***`` for a base64 token whose decoding holds a secret (a short one has no safe core)."""
    body = token.rstrip("=")
    for alphabet in (None, b"-_"):
        try:
            decoded = base64.b64decode(body + "=" * (-len(body) % 4), altchars=alphabet, validate=False)
        except ValueError:
            continue
        if any(s.encode() in decoded for s in secrets):
            return "***"
    return token


scrub = redact  # the former name


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The parts of a URL that may be credentials: user, password, query values (raw and decoded)."""
    if not url:
        return ()
    try:
        parts = urlsplit(str(url))
        username, password = parts.username, parts.password
    except ValueError:
        return ()
    values = [v for pair in parts.query.split("&") for v in pair.split("=")[1:]]
    found = (username, password, parts.query, *values)
    return tuple({s for v in found if v for s in (v, unquote(v))})


def check_url(url: str | None, what: str = "base_url") -> str | None:
    """``url`` if it holds no credentials; a URL with a user or password is refused (ValueError,
    the URL redacted): the key belongs in the environment variable named by ``api_key_env``."""
    if url is None:
        return None
    for secret in url_secrets(url):
        register_secret(secret)
    if "@" in str(url).partition("?")[0]:
        raise ValueError(f"{what}: expected a URL without a user or password ({redact_url(url)}); put the key in "
                         "the environment variable named by --api-key-env / api_key_env instead")
    try:
        parts = urlsplit(str(url))
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise ValueError(f"{what}: expected an http(s) URL, got {redact_url(url)}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what}: expected an http(s) URL, got {redact_url(url)}")
    return url


def redact_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Endpoint settings fit to store: URLs redacted, no key values (only ``api_key_env``)."""
    out = {}
    for key, value in settings.items():
        if "key" in key.lower() and key != "api_key_env":
            continue
        if isinstance(value, str):
            value = redact_url(value) if key.endswith("url") else redact(value)
        out[key] = value
    return out


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked to wait (``Retry-After-Ms``, ``Retry-After`` in seconds or as an
    HTTP date), or None."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            try:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError, IndexError, OverflowError):
                continue
        if seconds == seconds:  # not NaN
            return max(0.0, seconds)
    return None


class RequestTimeout(TimeoutError):
    """An attempt that did not complete within the endpoint's ``timeout``."""


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
    timeout: float = 60.0  # seconds per attempt, in total (connect, send, every read)
    retries: int = 3  # attempts after the first
    backoff: float = 1.0  # scale of the jittered wait before a retry, doubling after each (capped)

    def __post_init__(self) -> None:
        if not self.model or not isinstance(self.model, str):
            raise ValueError("expected a model name")
        check_url(self.base_url)
        finite = all(math.isfinite(v) for v in (self.timeout, self.retries, self.backoff))
        if not finite or self.timeout <= 0 or self.retries < 0 or self.backoff < 0:
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
            import tenacity
        except ImportError as exc:
            raise ImportError(f"LLM agents, judges and the rephraser need {exc.name}: "
                              "pip install 'proactivity-gym[llm]'", name=exc.name) from None
        self.endpoint = endpoint
        self.usage = Usage()
        self._openai, self._tenacity = openai, tenacity
        self._client = self._connect()

    def _connect(self):
        key = os.environ.get(self.endpoint.api_key_env) or "EMPTY"
        register_secret(key)
        # No retries inside the openai client: they are made (and counted) here.
        return self._openai.OpenAI(base_url=self.endpoint.base_url, api_key=key, timeout=self.endpoint.timeout,
                                   max_retries=0)

    @property
    def where(self) -> str:
        """The endpoint's URL, redacted: safe to store and print."""
        return redact_url(str(self._client.base_url).rstrip("/"))

    def chat(self, **request: Any) -> Any:
        ep, tenacity = self.endpoint, self._tenacity
        self._tries = 1
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(ep.retries + 1), wait=self._wait,
            retry=tenacity.retry_if_exception(self._retryable), before_sleep=self._count_retry,
            sleep=time.sleep, reraise=True)
        try:
            for attempt in retrying:
                with attempt:
                    return self._attempt(request)
        except self._openai.APIStatusError as exc:
            if exc.status_code not in RETRY_STATUS:
                raise self._failure(exc, "", transient=False) from None
            raise self._failure(exc, self._attempts(), transient=True) from None
        except Exception as exc:
            raise self._failure(exc, self._attempts(), transient=True) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, request: dict) -> Any:
        """One request, bounded in total by ``timeout`` (the openai client bounds each read only)."""
        box: dict[str, Any] = {}
        client = self._client

        def call() -> None:
            try:
                box["response"] = client.chat.completions.create(model=self.endpoint.model, **request)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=call, daemon=True, name="llm-request")
        worker.start()
        worker.join(self.endpoint.timeout)
        if worker.is_alive():
            self._client = self._connect()
            client.close()  # breaks the stalled connection; the worker ends on its own
            raise RequestTimeout(f"request timed out: no complete answer within {self.endpoint.timeout:g} s")
        if "error" in box:
            raise box["error"]
        choices = getattr(box["response"], "choices", None)  # a body that is not a completion has none
        if not choices or getattr(choices[0], "message", None) is None:
            raise ValueError("the response has no choices with a message")
        self.usage.add(getattr(box["response"], "usage", None))
        return choices[0].message

    def _retryable(self, exc: BaseException) -> bool:
        if isinstance(exc, self._openai.APIStatusError):
            delay = retry_after(exc)
            return exc.status_code in RETRY_STATUS and (delay is None or delay <= MAX_RETRY_AFTER)
        return isinstance(exc, Exception)

    def _wait(self, state) -> float:
        """The server's ``Retry-After`` if it sent one, else full-jitter exponential backoff."""
        delay = retry_after(state.outcome.exception())
        if delay is not None:
            return delay
        return self._tenacity.wait_random_exponential(multiplier=self.endpoint.backoff, max=MAX_BACKOFF)(state)

    def _count_retry(self, state) -> None:
        self.usage.retries += 1
        self._tries = state.attempt_number + 1

    def _attempts(self) -> str:
        tries = getattr(self, "_tries", 1)
        return f" after {tries} attempt{'s' if tries > 1 else ''}"

    def _failure(self, exc: BaseException, attempts: str, transient: bool) -> LLMEndpointError:
        delay = retry_after(exc) if isinstance(exc, self._openai.APIStatusError) else None
        later = f" (it asks to retry after {delay:.0f} s)" if delay is not None and delay > MAX_RETRY_AFTER else ""
        secrets = (os.environ.get(self.endpoint.api_key_env, ""), *url_secrets(self.endpoint.base_url))
        return LLMEndpointError(f"LLM endpoint {self.where} (model {self.endpoint.model!r}) failed{attempts}: "
                                f"{redact(_describe(exc), secrets)}{later}", transient)
