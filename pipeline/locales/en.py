"""English."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "English"  # in English

TEXTS = Texts(
    answer_lead_in="Here is what the documentation says:",
    team_answer_lead_in="Here is what the team answered before:",
    no_coverage="The documentation doesn't seem to cover this.",
    closest_sections="The closest sections I found:",
    offline_note="Answered without the language model, which was unavailable.",
    busy="I'm busy with other questions right now. Please try again in a minute.",
    stopped="Stopped, as you asked. Ask again whenever you like.",
    failure="Something went wrong while I was answering. Please try again; if it keeps happening, ask a human.",
    timeout="Answering took too long. Please try again in a moment.",
    refusal={
        "out_of_scope": "That's outside what the documentation covers, so I can't answer it.",
        "capability": "I can only answer questions about the documentation; I can't help with that request.",
    },
    clarify={
        "vague": "Could you tell me a bit more? What are you trying to do, and with which feature or product?",
        "ambiguous": "I found several sections that might fit. Which one do you mean?",
        "unverified": "I couldn't put together an answer I can back with the docs. Could you rephrase the question?",
        "no_coverage": "I couldn't find this in the documentation. Did you mean one of these topics?",
        "rephrase": "Sure, please ask your question again in other words.",
        "generic": "Could you clarify your question?",
        "thanked": "Glad it helped. If anything else comes up, ask here.",
    },
    rephrase_label="Rephrase my question",
    rate_limited="You're asking faster than I can keep up. Please wait a moment and try again.",
    token_budget_spent="Today's budget for answers is used up. Please try again tomorrow or ask a human.",  # noqa: S106 - a message, not a secret
    channel_not_allowed="I'm not set up to answer in this channel.",
    invite_needed="I'm not a member of this channel, so I can't answer here. Invite me with `{command} @{bot}`, "
    "then ask again.",
    empty_question="Please type a question after the mention.",
    question_too_long="That question is too long for me. Please keep it under {limit} characters.",
    unreadable_input="I couldn't read that message. Please send your question as plain text.",
    button_used="This choice was already used.",
    button_other_thread="This button belongs to another conversation.",
    button_expired="This choice has expired. Please ask again.",
    feedback_helpful="Helpful",
    feedback_not_helpful="Not helpful",
    ask_human="Ask a human",
    human_handoff="I've asked a person from the team to look at this thread.",
    feedback_thanks="Thanks for the feedback!",
    sources_heading="Sources",
    user_asked="{user} asked:",
    you_chose="You chose: {label}",
)

LEXICON = Lexicon(
    troubleshooting="troubleshooting problem not working",
    yes_no=r"^\s*(?:do|does|did|is|are|was|were|can|could|will|would|has|have|had|should|may|might|must)\b",
    presence=r"\b(?:have|has|got|comes?\s+with|includes?|supports?|compatible\s+with)\b",
    how_to=r"^how |(?:^| )(?:steps|set up|setup|install|configure|create|connect|enable|add )",
    how_many=r"\bhow\s+many\b",
    other=r"\b(?:what|anything|something|where|how)\s+else\b|\b(?:any|some)\s*(?:other|another)\b|\b(?:other|another|different)\s+(?:ways?|reasons?|options?|causes?|things?|ideas?|solutions?|fix(?:es)?|suggestions?)\b",
    amount=r"\bhow\s+(?:long|much|many|often|far|big|large|old|high|tall|wide|heavy|deep|loud|fast)\b",
    stopwords=words(
        """a an the and or but if then than so to of in on at by for with about from into over under up down out off
        is are was were be been being am do does did done doing have has had can could will would shall should may
        might must i me my mine we us our you your yours he him his she her they them their it its this that these
        those there here what which who whom whose when where why how not no yes don't doesn't didn't isn't aren't
        can't won't cannot please thanks thank hi hello hey ok okay just also any some all more most very really
        work works working worked use using used help need want get make thing things something anything problem
        problems issue issues broken tell know explain show anyone somebody stuff way what's it's that's how's
        where's i'm there's nothing everything again still quick question bot pls plz urgent asap one ones
        lol ppl tho btw fyi imo idk"""
    ),
    thanks=("thank you", "thanks", "thank", "thx", "ty", "cheers", "tysm"),
    alternatives=("or",),
    deictics=("it", "its", "that", "this", "they", "them", "those", "these"),
    possessives=words("their"),
    prepositions=words("of for with from on in about into"),
    determiners=words("the my your our their a an this that"),
    generic_nouns=words(
        "setting settings option options menu menus feature features"
        " function functions button buttons step steps thing things"
    ),
    capability=(
        ("code", r"\bwrite (me )?(a |an |some |the )?(program|script|code|function|class|regex)\b"),
        ("code", r"\b(write|generate|create|build|code)\b.{0,30}\b(python|javascript|typescript|java|c\+\+|c#|"
         r"rust|golang|sql|bash|powershell)\b"),
        ("creative", r"\b(write|compose) (me )?(a |an |some )?(poem|essay|story|song|joke|limerick)s?\b"),
        ("injection", r"\b(ignore|disregard|forget|override)\b.{0,40}\b(instructions?|rules|prompt|guidelines)\b"),
        ("prompt_leak", r"\b(reveal|show|print|repeat|tell me|what is|what's)\b.{0,30}\b(system prompt|your prompt|"
         r"your instructions|hidden instructions)\b"),
        ("roleplay", r"\b(pretend|role-?play|act as|you are now|from now on you)\b"),
        ("jailbreak", r"\b(jailbreak|developer mode|dan mode)\b"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say="The documentation doesn't say this: “{question}”",
    closest_they_come='The closest it comes is:',
)
