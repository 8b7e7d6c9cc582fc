"""Dutch (informal "je", as Dutch apps address people)."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "Dutch"  # in English

TEXTS = Texts(
    answer_lead_in="Dit staat er in de documentatie:",
    team_answer_lead_in="Dit heeft het team eerder geantwoord:",
    no_coverage="De documentatie lijkt dit niet te behandelen.",
    closest_sections="De best passende secties die ik heb gevonden:",
    offline_note="Beantwoord zonder het taalmodel, omdat dat niet beschikbaar was.",
    retry_label="Opnieuw proberen",
    keyword_only_note=(
        "Alleen via trefwoorden gevonden: de semantische index was niet "
        "beschikbaar, dus de resultaten kunnen minder nauwkeurig zijn."
    ),
    busy="Ik ben nu met andere vragen bezig. Probeer het over een minuut opnieuw.",
    stopped="Gestopt, zoals je vroeg. Vraag het gerust opnieuw wanneer je wilt.",
    failure="Er ging iets mis tijdens het beantwoorden. Probeer het opnieuw; blijft het gebeuren, vraag het dan aan "
    "een persoon.",
    timeout="Het antwoord duurde te lang. Probeer het zo opnieuw.",
    refusal={
        "out_of_scope": "Dat valt buiten wat de documentatie behandelt, dus daar kan ik geen antwoord op geven.",
        "capability": "Ik beantwoord alleen vragen over de documentatie; met dit verzoek kan ik niet helpen.",
    },
    clarify={
        "vague": "Kun je iets meer vertellen? Wat probeer je te doen, en met welke functie of welk product?",
        "ambiguous": "Ik heb meerdere secties gevonden die zouden kunnen passen. Welke bedoel je?",
        "unverified": "Ik kon geen antwoord maken dat de documentatie onderbouwt. Kun je de vraag anders stellen?",
        "no_coverage": "Ik heb dit niet in de documentatie gevonden. Bedoel je een van deze onderwerpen?",
        "rephrase": "Natuurlijk, stel je vraag opnieuw in andere woorden.",
        "generic": "Kun je je vraag verduidelijken?",
        "thanked": "Fijn dat het geholpen heeft. Als er nog iets is, vraag het hier.",
    },
    rephrase_label="Mijn vraag anders stellen",
    rate_limited="Je stelt sneller vragen dan ik kan beantwoorden. Wacht even en probeer het dan opnieuw.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "Het antwoordbudget voor vandaag is op. "
        "Probeer het morgen opnieuw of vraag het aan een persoon."
    ),
    channel_not_allowed="Ik ben niet ingesteld om in dit kanaal te antwoorden.",
    invite_needed="Ik ben geen lid van dit kanaal, dus ik kan hier niet antwoorden. Nodig me uit met `{command} "
    "@{bot}` en stel je vraag opnieuw.",
    empty_question="Typ een vraag na de vermelding.",
    question_too_long="Die vraag is te lang. Houd hem onder de {limit} tekens.",
    unreadable_input="Ik kon dat bericht niet lezen. Stuur je vraag als gewone tekst.",
    button_used="Deze keuze is al gebruikt.",
    button_other_thread="Deze knop hoort bij een ander gesprek.",
    button_expired="Deze keuze is verlopen. Stel je vraag opnieuw.",
    feedback_helpful="Nuttig",
    feedback_not_helpful="Niet nuttig",
    ask_human="Een persoon vragen",
    human_handoff="Ik heb iemand van het team gevraagd om naar deze thread te kijken.",
    feedback_thanks="Bedankt voor je feedback!",
    sources_heading="Bronnen",
    user_asked="{user} vroeg:",
    you_chose="Je koos: {label}",
)

LEXICON = Lexicon(
    troubleshooting="probleemoplossing probleem werkt niet",
    yes_no=r"^\s*(?:heeft|hebben|heb|hebt|kan|kun|kunt|kunnen|is|zijn|werkt|ondersteunt|bestaat|zit|zitten|moet|mag|wordt|gaat|doet|past|klopt|bevat)\b",
    how_to=r"^\W*hoe\b|\bstappen\b",
    presence=r"\b(?:heeft|hebben|is\s+er|zit\s+er|bevat|ondersteunt|compatibel\s+met)\b",
    other=r"\bwat\s+(?:nog\s+)?meer\b|\bwat\s+anders\b|\biets\s+anders\b|\bwat\s+kan\s+het\s+(?:nog|anders)\b|\bandere\s+(?:manier|oorzaak|reden|oplossing|optie)(?:en|s)?\b",
    amount=r"\bhoeveel\b|\bhoe\s+(?:lang|vaak|ver|groot|oud|hoog|breed|zwaar|diep|snel)\b",
    stopwords=words(
        """de het een en of maar als dan niet geen ja nee te van met bij voor op aan in uit naar om tot over onder
        wat hoe waar wanneer waarom wie welke welk is zijn was waren ben bent wordt worden werd kan kun kunt kunnen
        moet moeten mag wil wilt willen heb hebt heeft hebben doe doet doen gaat gaan ik mij me mijn jij je jou jouw
        u uw hij zij ze we wij ons onze hun zich er dit deze dat die daar hier werkt werken gebruiken gebruik
        helpen hulp alsjeblieft alstublieft aub bedankt dank hallo hoi probleem problemen iets niets heel erg meer
        ook al nog wel even zo nu ding dingen manier"""
    ),
    thanks=("dank je wel", "dank u wel", "dankjewel", "dankuwel", "bedankt", "dank"),
    alternatives=("of",),
    deictics=("het", "dat", "dit", "die", "deze", "ze", "hem", "ervan", "daarmee"),
    possessives=words("zijn hun"),
    impersonal=("is het mogelijk", "het is mogelijk"),
    # a separable verb's infinitive ("en uitzetten?"); a plural noun also ends in -en, so only these prefixes
    infinitive=r"(?!instellingen\b)(?:aan|uit|af|in|op|door|terug|weg|om|mee|vast|bij)\w{2,}en",
    prepositions=words("van met voor op in over uit naar"),
    determiners=words("de het een mijn je jouw uw ons onze dit dat deze die"),
    generic_nouns=words("optie opties instelling instellingen menu functie functies knop knoppen stap stappen"),
    capability=(
        ("code", r"\bschrijf\b.{0,15}\b(programma|script|code|functie)\b"),
        ("code", r"\bgenereer\b.{0,15}\b(script|code)\b"),
        ("injection", r"\b(negeer|vergeet|negeren)\b.{0,40}\b(instructies|regels|aanwijzingen|prompt)\b"),
        ("prompt_leak", r"\b(toon|laat|onthul|herhaal|geef)\b.{0,30}"
                        r"\b(prompt|systeemprompt|(?:je|jouw|uw) (?:eigen |verborgen )?instructies)\b"),
        ("roleplay", r"\b(doe alsof|speel de rol|rollenspel|gedraag je als|vanaf nu ben je)\b"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say="De documentatie zegt hier niets over: “{question}”",
    closest_they_come="Dit komt er het dichtst bij:",
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated="bijgewerkt op {date}",
    answered_by="beantwoord door {person} in {channel} op {date}",
)
