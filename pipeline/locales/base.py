"""The shape of one language: the user-facing texts and the small lexicon the offline roles read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True, slots=True)
class Texts:
    """Every sentence the bot says to people, in one language. `{name}` fields are filled with `str.format`."""

    # pipeline outcomes
    answer_lead_in: str
    team_answer_lead_in: str  # an answer that quotes only what the team answered in earlier threads
    no_coverage: str
    closest_sections: str
    offline_note: str
    busy: str
    failure: str
    stopped: str  # the person pressed stop while the answer was being made
    timeout: str
    refusal: dict[str, str]  # out_of_scope, capability
    clarify: dict[str, str]  # vague, ambiguous, unverified, no_coverage, rephrase, generic, thanked
    rephrase_label: str
    # service and adapters
    rate_limited: str
    token_budget_spent: str  # the daily LLM token budget is used up
    channel_not_allowed: str
    invite_needed: str  # {command} {bot}: a command used where the bot is not a member of the channel
    empty_question: str
    question_too_long: str  # {limit}
    unreadable_input: str
    button_used: str
    button_other_thread: str
    button_expired: str
    feedback_helpful: str
    feedback_not_helpful: str
    ask_human: str
    human_handoff: str
    feedback_thanks: str
    sources_heading: str
    user_asked: str  # {user}
    you_chose: str  # {label}
    keyword_only_note: str = (
        "Found by keyword search only: the semantic index was "
        "unavailable, so matches may be less precise."
    )
    retry_label: str = "Try again"  # the button under the apology when an answer could not be finished
    # the docs do not answer the question (issue 15); {question} is the person's question, shortened
    docs_dont_say: str = "The documentation doesn't say this: “{question}”"
    closest_they_come: str = "The closest it comes is:"
    # citations (issue 31): how old a source is, and who gave an answer the team approved; {date} is YYYY-MM-DD
    source_updated: str = "updated {date}"
    answered_by: str = "answered by {person} in {channel} on {date}"


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Function words and patterns of one language, for the offline essence and guardrails roles."""

    stopwords: frozenset[str]  # function words and generic verbs ("work", "help"): not a topic on their own
    deictics: tuple[str, ...]  # words that point back at the previous topic ("it", "that")
    capability: tuple[tuple[str, str], ...]  # (kind, regex) requests beyond a documentation assistant
    determiners: frozenset[str] = frozenset()  # words that open a noun phrase ("the", "my")
    # nouns that name no thing of their own ("setting", "option"): after a demonstrative they point back ("where is
    # that setting?" is the setting the last answer spoke of), where "that port" names a port
    generic_nouns: frozenset[str] = frozenset()
    prepositions: frozenset[str] = frozenset()  # words a noun phrase follows ("a folder of html files")
    # words and phrases that thank ("thanks", "thank you", "gracias"); where words are not spaced, found anywhere
    thanks: tuple[str, ...] = ()
    # words that offer a choice ("HDMI or optical?", "¿por HDMI o por óptico?"); where words are not spaced, found
    # anywhere ("HDMI还是光纤？")
    alternatives: tuple[str, ...] = ()
    # possessives that point back at the previous topic ("can I change their size?", "¿puedo cambiar su tamaño?"):
    # before their noun they still point back, where a demonstrative before a noun does not ("that port")
    possessives: frozenset[str] = frozenset()
    topic_position: Literal["start", "end"] = "end"  # where a topic goes when no word points back
    stop_phrases: tuple[str, ...] = field(default=())  # for scripts without spaces (Chinese)
    troubleshooting: str = ""  # what docs in this language call their problem-solving sections, for a search
    yes_no: str = ""  # regex: a question answered by yes or no ("does it have Wi-Fi?", "есть ли ...?", "...吗？")
    # regex: a question asking how many things there are ("how many", "wie viele", "cuántos", "几个"), where the
    # same words do not also ask how much ("сколько", "hoeveel", "ile" ask both, so those languages have none)
    how_many: str = ""
    # regex on the case-folded question: one asking how to do something ("how do I ...", "¿cómo ...?", "怎么 ...",
    # "steps to ..."), whose answer is a procedure: a numbered list of steps leads among passages as good
    how_to: str = ""
    # regex: a yes/no question asking whether something is there ("does it have Wi-Fi?", "hat er WLAN?", "有蓝牙吗？"):
    # it asks for the thing, not a number, however near "how many ports does it have?" its meaning reads
    presence: str = ""
    # regex: a question asking an amount ("how long", "how much", "wie lange", "cuánto", "多久"): after another
    # question, one that names little else asks it of what that question was about
    amount: str = ""
    # regex: a follow-up asking for something besides what the thread was given ("what else could it be?", "any
    # other way?", "¿qué más puede ser?", "was kann es sonst noch sein?", "还有别的办法吗？")
    other: str = ""
    # where words are not spaced, the question words found anywhere in a message ("怎么" in "这个是怎么包装的？")
    question_words: tuple[str, ...] = ()
    # pronouns written before the verb, object or reflexive ("¿cómo los desactivo?", "¿cómo se desactivan?",
    # "comment les désactiver ?"): right after a question word they stand for the last question's subject, where
    # elsewhere the same word may be an article ("los subtítulos")
    verb_pronouns: frozenset[str] = frozenset()
    # regex: a verb with an object pronoun written onto it ("desactivarlos", "disattivarli", "desativá-las")
    attached_pronoun: str = ""
    # regex: a verb's infinitive, a pronoun written onto it or not ("desactivar", "désactiver", "выключить"): after
    # "and ...?" it asks for another action on the same thing, where a noun names a new thing
    infinitive: str = ""
    # phrases whose pronoun stands for nothing ("gibt es ...?", "y a-t-il ...?", "faut-il ...?"): not pointing back
    impersonal: tuple[str, ...] = ()
    # where a verb's object goes unsaid when it is the subject of the talk (Chinese, Japanese, Korean): the "how"
    # words after which a lone verb asks to do it to the thread's subject ("怎么关掉？", "어떻게 꺼요?")
    object_dropped_after: tuple[str, ...] = ()


def words(text: str) -> frozenset[str]:
    """A word set written as one whitespace-separated string (readable word lists in the language modules)."""
    return frozenset(text.split())
