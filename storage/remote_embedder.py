"""`OpenAIEmbedder`: the `pipeline.types.Embedder` protocol over an OpenAI-compatible `POST /v1/embeddings`
(OpenAI, Azure, vLLM, Ollama, llama.cpp server, TEI), through `openai.AsyncOpenAI`.

- Batches of at most `batch_size` inputs per request, in order; the SDK retries 429 / 5xx / timeouts / dropped
  connections with its own backoff (honouring Retry-After) up to `max_retries` times; each whole call has a
  deadline (`query_deadline_s` for a question's vector, `deadline_s` per batch of passages).
- Every vector must have the index's dimension; anything else is `EmbeddingUnavailable(WRONG_DIMENSION)`, never a
  vector in another space. Vectors are L2-normalised (the index scores by dot product).
- Failures end in `EmbeddingUnavailable` with a typed `failure`. The endpoint's own failures count towards a
  circuit breaker (the LLM's `CircuitBreaker`): while it is open no request is sent, so a question goes keyword-only
  at once instead of waiting for a dead endpoint.
- No prefixes unless configured: "query: " / "passage: " belong to E5 models (set them for an E5 served remotely).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt
import openai
from pydantic import SecretStr

from pipeline.llm.breaker import CircuitBreaker
from storage.errors import EmbeddingFailure, EmbeddingUnavailable

log = logging.getLogger(__name__)

NO_KEY = "sk-no-key"  # local servers take any key; the SDK insists on one
PROBE_TEXT = "dimension probe"


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: SecretStr | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout_s: float = 20.0,
        max_retries: int = 2,
        query_deadline_s: float = 5.0,
        deadline_s: float = 120.0,
        query_prefix: str = "",
        passage_prefix: str = "",
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.batch_size = batch_size
        self.query_deadline_s = query_deadline_s
        self.deadline_s = deadline_s
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.breaker = breaker or CircuitBreaker()
        self._dim = dim
        self.requests = 0  # HTTP calls made (successful or not), for benchmarks
        self._client = openai.AsyncOpenAI(
            api_key=api_key.get_secret_value() if api_key is not None else NO_KEY,
            base_url=base_url,
            organization=None,
            timeout=timeout_s,
            max_retries=max_retries,
        )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(host={self._host!r}, model={self.model!r}, dim={self._dim})"

    @property
    def model_name(self) -> str:
        """What the index records next to each vector: the endpoint's model, with its prefixes if any."""
        prefixed = self.query_prefix or self.passage_prefix
        prefixes = f" [{self.query_prefix!r}|{self.passage_prefix!r}]" if prefixed else ""
        return f"openai:{self.model}{prefixes}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise RuntimeError("the embeddings endpoint's dimension is not known yet: call `resolve_dim()` first")
        return self._dim

    @property
    def _host(self) -> str:
        return urlsplit(self.base_url).netloc or self.base_url

    async def close(self) -> None:
        await self._client.close()

    async def resolve_dim(self) -> int:
        """The configured dimension, or (none configured) the size of one probe vector."""
        if self._dim is None:
            vector = await self._call([PROBE_TEXT], self.query_deadline_s, expected=None)
            self._dim = int(vector.shape[1])
        return self._dim

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed([self.query_prefix + t for t in texts], self.query_deadline_s)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed([self.passage_prefix + t for t in texts], self.deadline_s)

    async def _embed(self, texts: list[str], deadline_s: float) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            await self._call(texts[i : i + self.batch_size], deadline_s, expected=self.dim)
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts)

    async def _call(self, batch: list[str], deadline_s: float, *, expected: int | None) -> npt.NDArray[np.float32]:
        """One request (with the SDK's retries) under one deadline; the breaker hears the endpoint's verdict."""
        if not self.breaker.allow():
            raise EmbeddingUnavailable(EmbeddingFailure.BREAKER_OPEN, f"{self._host} skipped for a while")
        self.requests += 1
        try:
            async with asyncio.timeout(deadline_s):
                # an empty string is refused by OpenAI; a blank is the same nothing
                response = await self._client.embeddings.create(model=self.model, input=[t or " " for t in batch])
            vectors = _matrix(response, len(batch), expected, self._host)
        except asyncio.CancelledError:
            self.breaker.abandoned()
            raise
        except TimeoutError:
            self.breaker.failed()
            raise self._logged(EmbeddingFailure.TIMEOUT, f"{self._host}: no answer within {deadline_s:g}s") from None
        except EmbeddingUnavailable as exc:
            self.breaker.failed()
            raise self._logged(exc.failure, exc.detail) from None
        except openai.OpenAIError as exc:
            if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
                self.breaker.abandoned()  # these inputs were refused, not the endpoint broken
            else:
                self.breaker.failed()
            raise self._logged(*_classify(exc, self._host, self.max_retries, self.timeout_s)) from None
        except ValueError as exc:  # the SDK's own parse of the reply (e.g. no data)
            self.breaker.failed()
            raise self._logged(EmbeddingFailure.MALFORMED, f"{self._host}: {type(exc).__name__}") from None
        self.breaker.succeeded()
        return vectors

    def _logged(self, failure: EmbeddingFailure, detail: str) -> EmbeddingUnavailable:
        log.warning("embeddings call failed", extra={"failure": failure.value, "detail": detail, "model": self.model})
        return EmbeddingUnavailable(failure, detail)


def _matrix(response: object, count: int, expected: int | None, host: str) -> npt.NDArray[np.float32]:
    """The reply's vectors in input order, checked and L2-normalised."""
    data = getattr(response, "data", None)
    if not isinstance(data, list) or len(data) != count:
        got = len(data) if isinstance(data, list) else "no"
        raise EmbeddingUnavailable(EmbeddingFailure.MALFORMED, f"{host}: {got} vectors for {count} inputs")
    ordered = sorted(data, key=lambda item: int(item.index))
    if [int(item.index) for item in ordered] != list(range(count)):
        raise EmbeddingUnavailable(EmbeddingFailure.MALFORMED, f"{host}: vector indexes do not match the inputs")
    sizes = {len(item.embedding) for item in ordered}
    if len(sizes) != 1 or (expected is not None and sizes != {expected}) or 0 in sizes:
        shown = ", ".join(str(s) for s in sorted(sizes))
        raise EmbeddingUnavailable(
            EmbeddingFailure.WRONG_DIMENSION, f"{host}: vectors of {shown} dimensions, the index has {expected}"
        )
    matrix = np.asarray([item.embedding for item in ordered], dtype=np.float32)
    if not np.isfinite(matrix).all():
        raise EmbeddingUnavailable(EmbeddingFailure.MALFORMED, f"{host}: non-finite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _classify(exc: openai.OpenAIError, host: str, retries: int, timeout_s: float) -> tuple[EmbeddingFailure, str]:
    if isinstance(exc, openai.RateLimitError):
        return EmbeddingFailure.RATE_LIMITED, f"{host}: 429 after {retries} retries"
    if isinstance(exc, openai.APITimeoutError):
        return EmbeddingFailure.TIMEOUT, f"{host}: timed out after {timeout_s:g}s per attempt, {retries} retries"
    if isinstance(exc, openai.APIConnectionError):
        return EmbeddingFailure.UNREACHABLE, f"{host}: connection failed ({retries} retries)"
    if isinstance(exc, openai.APIStatusError):
        kind = EmbeddingFailure.SERVER_ERROR if exc.status_code >= 500 else EmbeddingFailure.REJECTED
        return kind, f"{host}: HTTP {exc.status_code}"
    return EmbeddingFailure.MALFORMED, f"{host}: {type(exc).__name__}"
