"""What kind of answer a question wants, read from its meaning in any language.

Documentation answers how to do something, what a thing is and whether the product does it. People also ask a
product's docs bot for numbers the docs may not state (size, weight, how many ports), for what a shop answers
(price, shipping, warranty) and for other people's opinions. The answerability decision weighs these differently:
a number needs a number in the passage, and a shop's or a person's answer is rarely in the docs at all.

The kind is the nearest of a few example questions per kind (written here in English, generic over products),
by the bundled multilingual model: a question in Russian or Chinese is compared with the same examples, so no
per-language word list is needed. A question counts as a kind other than `DOCS` only when it is nearer to that
kind's examples than to the docs examples.
"""

from __future__ import annotations

import asyncio

import numpy as np

from pipeline.types import Embedder, QuestionIntent, Vector

EXAMPLES: dict[QuestionIntent, tuple[str, ...]] = {
    QuestionIntent.DOCS: (
        "How do I connect headphones?", "How do I change the display mode?", "Can I mirror my phone screen?",
        "Does it have a sleep timer?", "How do I reset the settings?", "How do I install an extension?",
        "How do I turn on subtitles?", "Can I connect it to a wireless network?", "How do I update the software?",
        "What does this error message mean?", "Why is there no sound?", "How do I pair the remote control?",
        "Can I use it as a computer monitor?", "How do I set up access control?", "Does it support voice commands?",
        "How do I record to an external drive?", "Which file formats can it open?", "Where is the option to change "
        "the language?", "Can I turn off automatic updates?", "How do I add a user account?", "What happens when the "
        "connection fails?", "Is there a way to schedule a task?", "How do I configure the integration?",
        "What is the default timeout?",
    ),
    QuestionIntent.MEASURE: (
        "How much does it weigh?", "What are the dimensions?", "How tall is it?", "How wide is it with the stand?",
        "What size is the screen?", "How big is it in inches?", "What is the power consumption in watts?",
        "How many ports does it have?", "How many inputs are there?", "What is the refresh rate?",
        "What is the maximum brightness?", "What voltage does it use?", "How long is the cable?",
        "How thick is the device?", "What is the distance between the mounting holes?", "What is the battery "
        "capacity?", "How much storage does it have?", "How loud are the speakers in watts?",
    ),
    QuestionIntent.PURCHASE: (
        "How much does it cost?", "What is the price?", "When will it ship?", "Can I return it if I don't like it?",
        "How long is the warranty?", "Where can I buy a replacement part?", "Is it on sale?", "Does the price "
        "include shipping?", "Is this a new or refurbished unit?", "Which store sells it?", "Is it worth the money?",
        "What is the release date of this model?", "Is this the older or the newer model?", "Is delivery and "
        "installation included?", "How is it packaged?",
    ),
    QuestionIntent.OPINION: (
        "Is the picture quality good?", "Would you recommend it?", "Is anyone else having this problem with theirs?",
        "How do you like it?", "Is it better than the other brand?", "Which one should I buy?", "Are you happy "
        "with it?", "Did yours arrive damaged?", "Is the sound good enough on its own?", "How reliable is it after "
        "a year?", "Which model is better for gaming?", "Is it good for a small room?",
    ),
}  # fmt: skip
NEAREST = 3  # a kind's closeness: the mean cosine of its three nearest examples


_EMBEDDED: dict[tuple[str, int], dict[QuestionIntent, Vector]] = {}  # by model: the same for every reader in a process


class IntentReader:
    """Reads a question's `QuestionIntent` with an embedder; the examples are embedded once per model and process,
    on first use."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._key = (str(getattr(embedder, "model_name", type(embedder).__name__)), embedder.dim)
        self._lock = asyncio.Lock()

    async def _example_vectors(self) -> dict[QuestionIntent, Vector]:
        async with self._lock:
            if self._key not in _EMBEDDED:
                _EMBEDDED[self._key] = {
                    kind: await self._embedder.embed_queries(list(texts)) for kind, texts in EXAMPLES.items()
                }
            return _EMBEDDED[self._key]

    async def read(self, question_vector: Vector) -> tuple[QuestionIntent, float]:
        """The kind nearest to the question and how much nearer it is than `DOCS` (0.0 for `DOCS`)."""
        examples = await self._example_vectors()
        closeness = {
            kind: float(np.sort(vectors @ question_vector)[-NEAREST:].mean()) for kind, vectors in examples.items()
        }
        kind = max(closeness, key=lambda k: closeness[k])
        return kind, round(closeness[kind] - closeness[QuestionIntent.DOCS], 4)
