"""German."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "German"  # in English

TEXTS = Texts(
    answer_lead_in="Das steht dazu in der Dokumentation:",
    team_answer_lead_in="Das hat das Team dazu geantwortet:",
    no_coverage="Die Dokumentation scheint das nicht abzudecken.",
    closest_sections="Die passendsten Abschnitte, die ich gefunden habe:",
    offline_note="Ohne das Sprachmodell beantwortet, da es nicht verfügbar war.",
    retry_label="Erneut versuchen",
    keyword_only_note=(
        "Nur per Stichwortsuche gefunden: der semantische Index war nicht "
        "verfügbar, die Treffer können ungenauer sein."
    ),
    busy="Ich beantworte gerade viele andere Fragen. Bitte versuch es in einer Minute noch einmal.",
    stopped="Angehalten, wie gewünscht. Frag gern jederzeit noch einmal.",
    failure="Beim Antworten ist etwas schiefgelaufen. Bitte versuch es noch einmal; wenn es wieder passiert, "
    "frag einen Menschen.",
    timeout="Die Antwort hat zu lange gedauert. Bitte versuch es gleich noch einmal.",
    refusal={
        "out_of_scope": "Das liegt außerhalb dessen, was die Dokumentation abdeckt; darauf kann ich nicht antworten.",
        "capability": "Ich beantworte nur Fragen zur Dokumentation; bei dieser Anfrage kann ich nicht helfen.",
    },
    clarify={
        "vague": "Kannst du etwas mehr erzählen? Was möchtest du tun, und mit welcher Funktion oder welchem Produkt?",
        "ambiguous": "Ich habe mehrere Abschnitte gefunden, die passen könnten. Welchen meinst du?",
        "unverified": "Ich fand keine Antwort, die die Dokumentation belegt. Kannst du die Frage umformulieren?",
        "no_coverage": "Das habe ich in der Dokumentation nicht gefunden. Meinst du eines dieser Themen?",
        "rephrase": "Gern, stell deine Frage bitte noch einmal mit anderen Worten.",
        "generic": "Kannst du deine Frage genauer stellen?",
        "thanked": "Freut mich, dass es geholfen hat. Wenn noch etwas ist, frag einfach hier.",
    },
    rephrase_label="Frage umformulieren",
    rate_limited="Du fragst schneller, als ich antworten kann. Bitte warte kurz und versuch es dann noch einmal.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "Das heutige Antwortbudget ist aufgebraucht. "
        "Bitte versuch es morgen wieder oder frag einen Menschen."
    ),
    channel_not_allowed="Ich bin nicht dafür eingerichtet, in diesem Kanal zu antworten.",
    invite_needed="Ich bin kein Mitglied dieses Kanals und kann hier nicht antworten. Lade mich mit `{command} "
    "@{bot}` ein und frag dann noch einmal.",
    empty_question="Bitte schreib nach der Erwähnung eine Frage.",
    question_too_long="Diese Frage ist zu lang. Bitte bleib unter {limit} Zeichen.",
    unreadable_input="Ich konnte diese Nachricht nicht lesen. Bitte schick deine Frage als normalen Text.",
    button_used="Diese Auswahl wurde bereits verwendet.",
    button_other_thread="Diese Schaltfläche gehört zu einer anderen Unterhaltung.",
    button_expired="Diese Auswahl ist abgelaufen. Bitte frag noch einmal.",
    feedback_helpful="Hilfreich",
    feedback_not_helpful="Nicht hilfreich",
    ask_human="Einen Menschen fragen",
    human_handoff="Ich habe eine Person aus dem Team gebeten, sich diesen Thread anzusehen.",
    feedback_thanks="Danke für die Rückmeldung!",
    sources_heading="Quellen",
    user_asked="{user} fragte:",
    you_chose="Deine Wahl: {label}",
)

LEXICON = Lexicon(
    troubleshooting="Fehlerbehebung Problem funktioniert nicht",
    yes_no=r"^\s*(?:hat|haben|kann|können|kannst|ist|sind|gibt\s+es|unterstützt|funktioniert|lässt\s+sich|darf|muss|soll|wird)\b",
    presence=r"\b(?:hat|haben|gibt\s+es|enthält|dabei|unterstützt|unterstützen|kompatibel\s+mit)\b",
    how_to=r"^\W*wie\b|\bschritte\b",
    how_many=r"\bwie\s*viele\b",
    other=r"\bsonst\b|\bnoch\s+(?:etwas|was)\b|\bwas\s+(?:kann|könnte)\s+(?:es|das)\s+noch\b|\b(?:andere|anderer|anderen|anderes)\s+(?:Wege?|Möglichkeit(?:en)?|Gründe?|Ursachen?|Lösung(?:en)?|Ideen?)\b",
    amount=r"\bwie\s*(?:lange?|viele?|oft|weit|groß|gross|alt|hoch|breit|schwer|tief|laut|schnell)\b",
    stopwords=words(
        """der die das den dem des ein eine einen einem einer und oder aber wenn dann nicht kein keine ja nein zu
        von mit bei für auf in im an am aus über unter um was wie wo wann warum wer welche welcher welches ist sind
        war sein bin bist kann kannst können muss soll habe hast hat haben ich mich mir mein meine du dich dir dein
        deine er sie es wir ihr man uns sich dies diese dieser dieses dass da dort hier funktioniert funktionieren
        geht gehen benutzen nutzen verwenden hilfe helfen bitte danke hallo problem probleme etwas nichts sehr mehr
        auch schon noch mal ding klappt"""
    ),
    thanks=("vielen dank", "dankeschön", "danke", "dank"),
    alternatives=("oder",),
    deictics=("es", "das", "dies", "dieses", "diese", "dieser", "sie", "ihn"),
    possessives=words("seine seinen seinem seiner ihre ihren ihrem ihrer dessen deren"),
    impersonal=("gibt es", "es gibt", "geht es"),
    # written small, as a noun never is ("und ausschalten?"): case-sensitive inside the case-blind match
    infinitive=r"(?-i:[a-zäöüß]{3,}(?:en|ern|eln))",
    prepositions=words("von vom mit für auf im in zum zur über aus"),
    determiners=words(
        "der die das den dem des mein meine meinen meinem meiner dein deine ein eine einen einem einer eines"
    ),
    generic_nouns=words(
        "option optionen einstellung einstellungen menü funktion"
        " funktionen taste tasten knopf schritt schritte"
    ),
    capability=(
        ("code", r"\b(schreib|schreibe|schreiben)\b.{0,15}\b(programm|skript|script|code|funktion)\b"),
        ("injection", r"\b(ignoriere|vergiss|missachte)\b.{0,40}\b(anweisungen|instruktionen|regeln|prompt)\b"),
        ("prompt_leak", r"\b(zeig|zeige|verrate|wiederhole|nenne)\b.{0,30}\b(prompt|systemprompt|anweisungen)\b"),
        ("roleplay", r"\b(tu so als|spiel die rolle|spiele die rolle|rollenspiel|ab jetzt bist du)\b"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say='Dazu sagt die Dokumentation nichts: „{question}“',
    closest_they_come='Am nächsten kommen diese Abschnitte:',
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated='aktualisiert am {date}',
    answered_by='beantwortet von {person} in {channel} am {date}',
)
