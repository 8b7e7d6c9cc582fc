"""Chinese (traditional): the Simplified module's texts in Traditional characters and Taiwan's wording, made by
OpenCC from `zh` once at import (`pipeline.locales.chinese`), so the wording is written and reviewed in one place.
The lexicon is `zh`'s, which reads both scripts."""

from pipeline.locales import chinese, zh

CODE = chinese.TRADITIONAL_CHINESE
NAME = "Traditional Chinese"  # in English: what a model is told to write ("Write the answer in Traditional Chinese")

TEXTS = chinese.traditional(zh.TEXTS)
LEXICON = zh.LEXICON
