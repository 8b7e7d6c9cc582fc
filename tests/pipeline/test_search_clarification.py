"""search and clarification offline: asking which section is meant, templates per language, the choices offered."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.agents.augmentation import number_sources
from pipeline.agents.clarification import ClarificationAgent
from pipeline.agents.search import MAX_LABEL_CHARS, SearchAgent, says_what_is_wrong, section_actions, section_key
from pipeline.envelope import Context, Payload
from pipeline.locales import SUPPORTED, texts
from pipeline.types import (
    ActionKind,
    ContextType,
    QualityDecision,
    SearchQuality,
    SearchRequest,
    SearchResponse,
    SuggestedAction,
)
from tests.pipeline.fakes import ScriptedRetriever, hit

pytestmark = pytest.mark.unit

SEVERAL = SearchResponse(
    hits=(hit("Factory reset", 0.68), hit("Network reset", 0.67), hit("Reset the remote", 0.66), hit("Misc", 0.1)),
    quality=SearchQuality.GOOD,
)
WEAK = SearchResponse(
    hits=(hit("Factory reset", 0.42), hit("Network reset", 0.4), hit("Reset the remote", 0.38), hit("Misc", 0.1)),
    quality=SearchQuality.POOR,
)


async def test_request_carries_question_language_and_collections() -> None:
    retriever = ScriptedRetriever(SearchResponse(hits=(hit("A", 0.9),), quality=SearchQuality.EXCELLENT))
    payload = Payload(text="how do I reset?", language="en", canonical_question="how do I reset the remote?")
    await SearchAgent(retriever).run(payload, Context(collections=("tv", "audio")))
    request = retriever.requests[0]
    assert request.text == "how do I reset the remote?"
    assert request.text_eng == "how do I reset the remote?"
    assert request.collections == ("tv", "audio") and request.language == "en"


async def test_several_equally_good_sections_ask_which_one() -> None:
    result = await SearchAgent(ScriptedRetriever(SEVERAL)).run(Payload(text="reset", language="es"), Context())
    payload = result.payload
    assert payload.needs_clarification and payload.clarification_reason == "ambiguous"
    # each label carries its page: "Guide › Factory reset", never a bare heading
    labels = [a.label for a in payload.suggested_actions]
    assert labels == ["Guide › Factory reset", "Guide › Network reset", "Guide › Reset the remote"]
    assert all(a.kind is ActionKind.SEARCH and a.value == a.label for a in payload.suggested_actions)
    assert payload.clarification_message == texts("es").clarify["ambiguous"]


async def test_a_terse_message_asks_even_when_the_best_section_is_excellent() -> None:
    """"limits" over two limit sections 7% apart: the grade is excellent, yet the word says nothing about which
    limit; a clear winner (the other section far below) is answered."""
    close = SearchResponse(hits=(hit("LLM budget", 0.87), hit("Abuse limits", 0.81), hit("Misc", 0.6)),
                           quality=SearchQuality.EXCELLENT)  # fmt: skip
    result = await SearchAgent(ScriptedRetriever(close)).run(Payload(text="limits", language="en"), Context())
    assert [a.label for a in result.payload.suggested_actions] == ["Guide › LLM budget", "Guide › Abuse limits"]
    clear = SearchResponse(hits=(hit("LLM budget", 0.87), hit("Abuse limits", 0.7)), quality=SearchQuality.EXCELLENT)
    result = await SearchAgent(ScriptedRetriever(clear)).run(Payload(text="limits", language="en"), Context())
    assert not result.payload.needs_clarification


async def test_a_single_good_section_does_not_ask() -> None:
    one = SearchResponse(hits=(hit("Factory reset", 0.68), hit("Misc", 0.6)), quality=SearchQuality.GOOD)
    result = await SearchAgent(ScriptedRetriever(one)).run(Payload(text="reset"), Context())
    assert not result.payload.needs_clarification


async def test_a_poor_search_does_not_offer_a_menu_of_unrelated_sections() -> None:
    result = await SearchAgent(ScriptedRetriever(WEAK)).run(Payload(text="how do I file my taxes?"), Context())
    assert not result.payload.needs_clarification
    assert result.payload.search_quality is SearchQuality.POOR


async def test_no_second_question_after_a_choice_or_in_a_research_round() -> None:
    chosen = Payload(text="reset", chosen_action=SuggestedAction("Factory reset"))
    assert not (await SearchAgent(ScriptedRetriever(SEVERAL)).run(chosen, Context())).payload.needs_clarification
    retriever = ScriptedRetriever(SEVERAL)
    research = Payload(text="reset it", canonical_question="reset the remote").evolve(
        quality_decision=QualityDecision.RESEARCH
    )
    result = await SearchAgent(retriever, research_top_k=20).run(research, Context())
    assert not result.payload.needs_clarification
    assert retriever.requests[0].top_k == 20 and "reset it" in retriever.requests[0].text


@pytest.mark.parametrize("language", SUPPORTED)
async def test_clarification_uses_the_template_of_the_language(language: str) -> None:
    payload = Payload(text="q", language=language, clarification_reason="ambiguous", search_results=SEVERAL.hits)
    result = (await ClarificationAgent().run(payload, Context())).payload
    assert result.clarification_message == texts(language).clarify["ambiguous"]
    assert result.suggested_actions[-1] == SuggestedAction(texts(language).rephrase_label, ActionKind.REPHRASE)


async def test_at_most_four_choices_from_distinct_sections_plus_rephrase() -> None:
    hits = tuple(hit(f"Section {i % 7}", 0.9 - i / 100, doc=f"d{i}") for i in range(12))
    payload = Payload(text="q", language="en", clarification_reason="vague", search_results=hits)
    actions = (await ClarificationAgent().run(payload, Context())).payload.suggested_actions
    labels = [a.label for a in actions]
    assert len(actions) == 5 and labels[-1] == texts("en").rephrase_label
    assert len(set(labels[:-1])) == 4


async def test_proposed_choices_are_kept() -> None:
    proposed = (SuggestedAction("Pairing"), SuggestedAction("Batteries"))
    payload = Payload(text="q", language="en", clarification_reason="ambiguous", suggested_actions=proposed)
    actions = (await ClarificationAgent().run(payload, Context())).payload.suggested_actions
    assert actions[:2] == proposed


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"chosen_action": SuggestedAction("Rephrase", ActionKind.REPHRASE)}, "rephrase"),
        ({"quality_decision": QualityDecision.REGENERATE}, "unverified"),
        ({"quality_decision": QualityDecision.CLARIFY}, "no_coverage"),
        ({}, "generic"),
    ],
)
async def test_reason_is_inferred_when_not_given(changes: dict[str, object], reason: str) -> None:
    payload = Payload(text="q", language="ru").evolve(**changes)
    result = (await ClarificationAgent().run(payload, Context())).payload
    assert result.clarification_reason == reason
    assert result.clarification_message == texts("ru").clarify[reason]


async def test_an_unknown_reason_keeps_the_asking_roles_message() -> None:
    payload = Payload(text="q", clarification_reason="model unsure", clarification_message="Which TV model?")
    result = (await ClarificationAgent().run(payload, Context())).payload
    assert result.clarification_message == "Which TV model?"


async def test_a_vague_first_message_still_gets_choices_from_the_documentation() -> None:
    retriever = ScriptedRetriever(SEVERAL)
    payload = Payload(text="it doesn't work", language="en", clarification_reason="vague")
    context = Context(collections=("manuals",))
    actions = (await ClarificationAgent(retriever=retriever).run(payload, context)).payload.suggested_actions
    titles = ["Factory reset", "Network reset", "Reset the remote"]
    assert [a.label for a in actions[:3]] == [f"Guide › {title}" for title in titles]
    assert actions[-1].kind is ActionKind.REPHRASE
    assert retriever.requests[0].collections == ("manuals",)


class _ByText:
    """Answers per request text; records the requests."""

    def __init__(self, responses: dict[str, SearchResponse], default: SearchResponse) -> None:
        self.responses, self.default = responses, default
        self.requests: list[str] = []

    async def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request.text)
        return self.responses.get(request.text, self.default)


async def test_a_chosen_section_is_what_the_answer_comes_from_even_when_the_search_ranks_it_lower() -> None:
    chosen = SuggestedAction("Network reset", ActionKind.SEARCH, value=section_key(WEAK.hits[1]))
    retriever = _ByText({}, WEAK)
    payload = Payload(text="reset", language="en", canonical_question="x: reset", chosen_action=chosen)
    result = (await SearchAgent(retriever).run(payload, Context())).payload
    assert [h.title for h in result.search_results] == ["Network reset"]
    assert result.search_quality is SearchQuality.GOOD  # the person named it
    assert not result.needs_clarification
    assert len(retriever.requests) == 1


async def test_a_chosen_section_missing_from_the_results_is_looked_up_by_name() -> None:
    target = hit("Cleaning the hub", 0.2)
    chosen = SuggestedAction("Cleaning the hub", ActionKind.SEARCH, value=section_key(target))
    retriever = _ByText({section_key(target): SearchResponse(hits=(target,), quality=SearchQuality.POOR)}, SEVERAL)
    payload = Payload(text="it", language="en", canonical_question="Cleaning: it", chosen_action=chosen)
    result = (await SearchAgent(retriever).run(payload, Context())).payload
    assert [h.title for h in result.search_results] == ["Cleaning the hub"]
    assert retriever.requests == ["Cleaning: it", section_key(target)]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("How do I reset the hub to factory settings?", "en"),
        ("Factory reset. How do I do that?", "en"),  # the question is the second sentence
        ("重置是怎么做的？", "zh"),  # 怎么 inside, no spaces
        ("リセットはどうやりますか？", "ja"),  # どう inside, no spaces
        ("리셋은 어떻게 하나요?", "ko"),  # the question word is not first in Korean
        ("Come si fa il reset?", "it"),
        ("Jak zresetować hub?", "pl"),
    ],
)
async def test_a_full_question_is_answered_even_when_sections_are_close(text: str, language: str) -> None:
    result = await SearchAgent(ScriptedRetriever(SEVERAL)).run(Payload(text=text, language=language), Context())
    assert not result.payload.needs_clarification


@pytest.mark.parametrize("text", ["reset", "reset?", "hub reset?", "reset the hub"])
async def test_a_bare_topic_asks_which_one_even_with_a_question_mark(text: str) -> None:
    result = await SearchAgent(ScriptedRetriever(SEVERAL)).run(Payload(text=text, language="en"), Context())
    assert result.payload.needs_clarification


async def test_a_terse_chinese_message_without_a_question_word_asks() -> None:
    result = await SearchAgent(ScriptedRetriever(SEVERAL)).run(Payload(text="重置", language="zh"), Context())
    assert result.payload.needs_clarification


@pytest.mark.parametrize(
    ("reply", "answers"),
    [
        ("the remote", True),  # a short answer to "which one?"
        ("Network reset", True),  # names a choice
        ("yes", True),
        ("the reset of the remote, please", True),  # shares a word with the question
        ("What's the capital of France?", False),  # a new question
        ("How do I ingest Markdown files?", False),
        ("¿Cómo configuro los canales?", False),
    ],
)
def test_whether_a_message_answers_the_pending_clarification(reply: str, answers: bool) -> None:
    from pipeline.agents.clarification import answers_clarification
    from pipeline.types import SuggestedAction

    pending = Payload(text="reset", canonical_question="reset").evolve(
        suggested_actions=(SuggestedAction("Guide › Network reset", ActionKind.SEARCH, "Guide › Network reset"),)
    )
    assert answers_clarification(pending, reply) is answers


def test_a_choice_too_long_for_a_button_shortens_its_page_and_keeps_it() -> None:
    """Issue 14: choices were labelled "What happens when things go wrong" (the page dropped when too long)."""
    page, title = "Reliability: nothing lost, nothing twice", "What happens when things go wrong"
    long_hit = replace(hit(title, 0.9), crumbs=(page, title))
    (choice,) = section_actions((long_hit,), floor=0.0, limit=4)
    assert choice.value == f"{page} › {title}"  # what a press searches: the whole key
    assert len(choice.label) <= MAX_LABEL_CHARS and choice.label.endswith(f"… › {title}")
    assert choice.label.startswith("Reliability")


@pytest.mark.parametrize(
    ("question", "language"),
    [("does it have Wi-Fi?", "en"), ("¿Tiene WiFi?", "es"), ("Hat er WLAN?", "de"), ("Есть ли Wi-Fi?", "ru"),
     ("有WiFi吗？", "zh"), ("Est-ce qu'il a le WiFi ?", "fr")],
)  # fmt: skip
async def test_a_short_yes_no_question_is_answered_not_asked_back(question: str, language: str) -> None:
    # terse enough to be "ambiguous" by its words, but the section that says yes or no answers it
    result = await SearchAgent(ScriptedRetriever(SEVERAL)).run(Payload(text=question, language=language), Context())
    assert not result.payload.needs_clarification
    bare = await SearchAgent(ScriptedRetriever(SEVERAL)).run(Payload(text="wifi", language=language), Context())
    assert bare.payload.needs_clarification  # the same few words without the question still ask which one


class TroubleshootingRetriever(ScriptedRetriever):
    """The topic's own sections for a question, the docs' troubleshooting sections for one with their words."""

    def __init__(self, topic: SearchResponse, troubleshooting: SearchResponse) -> None:
        super().__init__(topic)
        self.troubleshooting = troubleshooting

    async def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request)
        return self.troubleshooting if "troubleshooting" in request.text else self.response


async def test_a_follow_up_saying_it_failed_leads_with_the_topics_troubleshooting_sections() -> None:
    pairing = SearchResponse(hits=(hit("Pairing the remote", 0.9), hit("Remote buttons", 0.7)),
                             quality=SearchQuality.EXCELLENT)  # fmt: skip
    on_topic, general = hit("The remote won't pair", 0.8), hit("Other issues", 0.9)
    retriever = TroubleshootingRetriever(pairing, SearchResponse(hits=(general, on_topic), quality=SearchQuality.GOOD))
    asked = Payload(text="what if that doesn't work?", language="en", context_type=ContextType.FOLLOW_UP,
                    canonical_question="How do I pair the remote? what if that doesn't work?")  # fmt: skip
    result = await SearchAgent(retriever).run(asked, Context())
    titles = [h.title for h in result.payload.search_results]
    assert titles == ["The remote won't pair", "Pairing the remote", "Remote buttons"]
    assert "troubleshooting" not in retriever.requests[0].text and "troubleshooting" in retriever.requests[1].text
    # the topic's own search scored its sections higher, on its own scale: the sources keep the order all the same
    sources = number_sources(result.payload.search_results, limit=5, min_share=0.5)
    assert [s.title for s in sources] == titles

    # a topic with no troubleshooting section of its own keeps its sections, not the manual's general ones
    alone = TroubleshootingRetriever(pairing, SearchResponse(hits=(general,), quality=SearchQuality.GOOD))
    result = await SearchAgent(alone).run(asked, Context())
    assert result.payload.search_results == pairing.hits

    # "how does it work?" asks how, not what to do when it fails; a first question is searched as asked
    for payload in (replace(asked, text="how does it work?", canonical_question="how does the remote work?"),
                    replace(asked, context_type=ContextType.NEW_TOPIC)):  # fmt: skip
        plain = TroubleshootingRetriever(pairing, SearchResponse(hits=(on_topic,), quality=SearchQuality.GOOD))
        await SearchAgent(plain).run(payload, Context())
        assert ["troubleshooting" in r.text for r in plain.requests] == [False]


# A message saying what is wrong, searched as typed: a design note quoting it as an example ranks first on keywords,
# a general "... Isn't Working" entry on the failure words; the docs' entry for that problem is further down.
EXAMPLE = hit("When the docs do not answer", 0.92, 'A symptom, "the bot doesn\'t answer in my channel", negates.')
CHANNEL = hit("The bot does not answer in a channel", 0.66, "Invite the bot to the channel: /invite @docbot.")
OTHER = hit("Clarifying questions", 0.65)


@pytest.mark.parametrize("text", ["the bot doesn't answer in my channel", "my bot does not answer in the channel!"])
async def test_a_problem_the_message_states_leads_with_the_section_titled_by_it(text: str) -> None:
    found = SearchResponse(hits=(EXAMPLE, CHANNEL, OTHER), quality=SearchQuality.GOOD)
    result = await SearchAgent(ScriptedRetriever(found)).run(Payload(text=text, language="en"), Context())
    payload = result.payload
    assert [h.title for h in payload.search_results] == [CHANNEL.title, EXAMPLE.title, OTHER.title]
    assert not payload.needs_clarification  # one section names the problem: it answers, nothing is asked
    # numbered and read best score first: the named section is source 1, the others a step below it
    sources = number_sources(payload.search_results, limit=5, min_share=0.5)
    assert sources[0].title == CHANNEL.title and sources[1].confidence < sources[0].confidence


@pytest.mark.parametrize("text", ["my remote doesn't work", "the remote stopped working"])
async def test_a_problem_stated_in_a_table_row_is_offered_instead_of_other_failures(text: str) -> None:
    """"my remote doesn't work" over a manual whose "... Isn't Working" sections lead on the failure words: the
    choices are the sections with a short sentence saying the remote does not work (not a long one in passing)."""
    found = SearchResponse(hits=(
        hit("Anynet+ (HDMI-CEC) Isn't Working", 0.77, "Anynet+ does not work. Check the HDMI cable."),
        hit("My File Won't Play", 0.72, "Some files can't be played."),
        hit("Other Issues", 0.68, "The TV is hot. The remote control and/or voice control does not work. Remove the "
                                  "protective stickers."),
        hit("Anynet+ devices", 0.59, "The TV remote control may not work under certain circumstances."),
        hit("Using the remote", 0.58, "Point the remote at the TV. External speakers may not be controlled."),
        hit("Discord", 0.57, "If the intent is not turned on in the portal, the remote bot notices it at start and "
                             "does not work in threads without a mention."),
    ), quality=SearchQuality.GOOD)  # fmt: skip
    result = await SearchAgent(ScriptedRetriever(found)).run(Payload(text=text), Context())
    payload = result.payload
    assert payload.needs_clarification
    assert [a.value for a in payload.suggested_actions] == ["Guide › Other Issues", "Guide › Anynet+ devices"]


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("how do I reset the remote?", "Misc"),  # asks, says nothing is wrong: searched as asked
        ("the remote doesn't reset", "Reset the remote"),  # a section named by the problem leads
        ("the remote doesn't pair", "Misc"),  # no section names or states it: unchanged
        ("how do I reset the remote, not the network?", "Misc"),  # a "not" in a question asking how: a way wanted
    ],
)
async def test_only_a_stated_problem_reorders_and_only_by_a_section_about_it(text: str, first: str) -> None:
    found = SearchResponse(hits=(hit("Misc", 0.8), hit("Reset the remote", 0.7), hit("Network reset", 0.6)),
                           quality=SearchQuality.EXCELLENT)  # fmt: skip
    result = await SearchAgent(ScriptedRetriever(found)).run(Payload(text=text, language="en"), Context())
    assert result.payload.search_results[0].title == first


@pytest.mark.parametrize(("message", "wrong"), [
    ("the bot doesn't answer in my channel", True), ("the TV has no sound", True), ("my pdf won't ingest", True),
    ("bot doesnt answer in my channel", True), ("my pdf wont ingest", True),
    ("the picture is fine, the sound not.", True),
    ("der Fernseher hat keinen Ton", True), ("el bot no responde en mi canal", True), ("遥控器不工作", True),
    ("the app keeps crashing", True), ("why does it not pair?", True), ("¿por qué no responde el bot?", True),
    ("为什么没有声音？", True), ("why is the picture dark?", False),
    ("how do I reset Smart Hub?", False), ("HR docs should be answerable in #hr, not #general. how do I set that up?",
                                            False),
])  # fmt: skip
def test_a_message_says_what_is_wrong_when_something_fails_or_a_statement_negates(message: str, wrong: bool) -> None:
    assert says_what_is_wrong(message, None) is wrong


async def test_a_bare_problem_whose_section_the_search_put_first_is_answered_not_asked_back() -> None:
    """"remote won't pair" is a bare topic, and "Remote buttons and keys" scores within 10% of the best; the best is
    the one section whose title says the problem, so there is nothing to choose between."""
    found = SearchResponse(hits=(hit("The remote does not pair", 0.9), hit("Remote buttons and keys", 0.88)),
                           quality=SearchQuality.EXCELLENT)  # fmt: skip
    result = await SearchAgent(ScriptedRetriever(found)).run(Payload(text="remote won't pair"), Context())
    assert not result.payload.needs_clarification
    assert [h.title for h in result.payload.search_results] == ["The remote does not pair", "Remote buttons and keys"]
    # without a problem in it, a bare topic asks which one is meant
    result = await SearchAgent(ScriptedRetriever(found)).run(Payload(text="remote pairing"), Context())
    assert result.payload.needs_clarification
