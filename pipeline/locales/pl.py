"""Polish (informal "ty", as Polish apps address people; the bot's own sentences avoid gendered past forms)."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "Polish"  # in English

TEXTS = Texts(
    answer_lead_in="Oto, co mówi dokumentacja:",
    team_answer_lead_in="Oto, co zespół odpowiedział wcześniej:",
    no_coverage="Wygląda na to, że dokumentacja nie obejmuje tego tematu.",
    closest_sections="Najbliższe sekcje, jakie udało się znaleźć:",
    offline_note="Odpowiedź przygotowana bez modelu językowego, który był niedostępny.",
    retry_label="Spróbuj ponownie",
    keyword_only_note=(
        "Znalezione tylko przez wyszukiwanie słów kluczowych: indeks semantyczny był "
        "niedostępny, więc wyniki mogą być mniej dokładne."
    ),
    busy="Odpowiadam teraz na inne pytania. Spróbuj ponownie za minutę.",
    stopped="Zatrzymano, zgodnie z prośbą. Zapytaj ponownie, kiedy zechcesz.",
    failure="Podczas odpowiadania coś poszło nie tak. Spróbuj ponownie; jeśli problem się powtórzy, zapytaj człowieka.",
    timeout="Odpowiedź trwała zbyt długo. Spróbuj ponownie za chwilę.",
    refusal={
        "out_of_scope": "To wykracza poza zakres dokumentacji, więc nie mogę na to odpowiedzieć.",
        "capability": "Mogę odpowiadać tylko na pytania dotyczące dokumentacji; w tej sprawie nie mogę pomóc.",
    },
    clarify={
        "vague": "Czy możesz napisać trochę więcej? Co chcesz zrobić i z jaką funkcją lub produktem?",
        "ambiguous": "Kilka sekcji może pasować. O którą chodzi?",
        "unverified": "Nie udało się przygotować odpowiedzi popartej dokumentacją. Czy możesz zadać pytanie inaczej?",
        "no_coverage": "Nie udało się znaleźć tego w dokumentacji. Czy chodzi o któryś z tych tematów?",
        "rephrase": "Jasne, zadaj pytanie jeszcze raz innymi słowami.",
        "generic": "Czy możesz doprecyzować pytanie?",
        "thanked": "Cieszę się, że pomogło. Jeśli pojawi się coś jeszcze, pytaj tutaj.",
    },
    rephrase_label="Zadaj pytanie inaczej",
    rate_limited="Pytasz szybciej, niż nadążam odpowiadać. Poczekaj chwilę i spróbuj ponownie.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "Dzisiejszy limit odpowiedzi został wyczerpany. "
        "Spróbuj ponownie jutro albo zapytaj człowieka."
    ),
    channel_not_allowed="Odpowiadanie na tym kanale nie jest włączone.",
    invite_needed="Nie jestem członkiem tego kanału, więc nie mogę tu odpowiedzieć. Zaproś mnie poleceniem "
    "`{command} @{bot}` i zapytaj ponownie.",
    empty_question="Wpisz pytanie po wzmiance.",
    question_too_long="To pytanie jest za długie. Zmieść się w {limit} znakach.",
    unreadable_input="Nie udało się odczytać tej wiadomości. Wyślij pytanie jako zwykły tekst.",
    button_used="Ten wybór został już użyty.",
    button_other_thread="Ten przycisk należy do innej rozmowy.",
    button_expired="Ten wybór wygasł. Zadaj pytanie ponownie.",
    feedback_helpful="Pomocne",
    feedback_not_helpful="Niepomocne",
    ask_human="Zapytaj człowieka",
    human_handoff="Poproszono osobę z zespołu o sprawdzenie tego wątku.",
    feedback_thanks="Dziękuję za opinię!",
    sources_heading="Źródła",
    user_asked="{user} pyta:",
    you_chose="Wybrano: {label}",
)

LEXICON = Lexicon(
    troubleshooting="rozwiązywanie problemów nie działa",
    yes_no=r"^\s*(?:a\s+)?czy\b|^\s*(?:ma|mają|jest|są|można|da\s+się|działa|obsługuje|posiada|wspiera|mogę|zawiera)\b",
    how_to=r"^\W*jak\b|\bkroki\b",
    presence=r"\b(?:ma|mają|posiada|zawiera|obsługuje)\b|\bw\s+zestawie\b|\bkompatybiln\w*\s+z\b",
    other=r"\bco\s+(?:jeszcze|innego)\b|\bcoś\s+innego\b|\binn(?:y|a|e)\s+(?:sposób|sposoby|powód|powody|przyczyna|przyczyny|rozwiązanie|rozwiązania|opcja|opcje)\b",
    amount=r"\bile\b|\bjak\s+(?:długo|często|daleko|szybko)\b",
    stopwords=words(
        """i oraz lub albo ale jeśli jeżeli że nie tak czy w we na z ze do od po przy o dla bez nad przez za jak
        co gdzie kiedy dlaczego czemu który która które którego jaki jaka jakie ile jest są był była było być mam
        ma mają mieć można może mogę mogą muszę trzeba chcę mój moja moje mnie mi ja ty cię twój twoja on ona
        ono oni one jej ich im mu my nas nam wy was się sobie ten tam tu tutaj działa działają działać używać użyć
        korzystać pomoc pomóc pomocy proszę dziękuję dzięki cześć witam problem problemy coś bardzo więcej też
        także już jeszcze rzecz sposób zrobić robić"""
    ),
    thanks=("bardzo dziękuję", "dziękuję", "dzięki", "dziekuje", "dzieki"),
    alternatives=("czy", "albo", "lub"),
    deictics=("to", "tego", "tym", "go", "ją", "je", "nim", "niej", "ten", "ta", "te", "tej"),
    possessives=words("jego jej ich"),
    infinitive=r"(?!(?:sieć|pamięć|część|treść)\b)\w{2,}ć(?:\s+się)?",
    determiners=words("ten ta te to mój moja moje twój twoja"),
    generic_nouns=words("opcja opcję opcji ustawienie ustawienia menu funkcja funkcję funkcji przycisk krok"),
    capability=(
        ("code", r"\b(napisz|napiszesz)\b.{0,15}(program|skrypt|kod|funkcj)"),
        ("code", r"\b(wygeneruj|stwórz)\b.{0,15}\b(skrypt|kod)"),
        ("injection", r"(zignoruj|ignoruj|zapomnij|pomiń)\w*.{0,40}(instrukcj|polece|zasad|regu|prompt)"),
        ("prompt_leak", r"\b(pokaż|ujawnij|wypisz|powtórz|podaj)\b.{0,30}"
                        r"(prompt|(swoje|twoje|ukryte) instrukcj|instrukcj\w* systemow|polecenia systemowe)"),
        ("roleplay", r"(udawaj|odegraj rolę|wciel się|zachowuj się jak|od teraz jesteś|graj rolę)"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say="Dokumentacja nic o tym nie mówi: „{question}”",
    closest_they_come="Najbliżej tego jest:",
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated="zaktualizowano {date}",
    answered_by="odpowiedź od {person} na {channel}, {date}",
)
