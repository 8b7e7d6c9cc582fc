"""Italian (informal "tu", as Italian apps address people)."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "Italian"  # in English

TEXTS = Texts(
    answer_lead_in="Ecco cosa dice la documentazione:",
    team_answer_lead_in="Ecco cosa ha risposto il team in precedenza:",
    no_coverage="Sembra che la documentazione non tratti questo argomento.",
    closest_sections="Le sezioni più vicine che ho trovato:",
    offline_note="Risposta data senza il modello linguistico, che non era disponibile.",
    retry_label="Riprova",
    keyword_only_note=(
        "Trovato solo tramite parole chiave: l'indice semantico non era "
        "disponibile, quindi i risultati potrebbero essere meno precisi."
    ),
    busy="In questo momento sto rispondendo ad altre domande. Riprova tra un minuto.",
    stopped="Interrotto, come hai chiesto. Chiedi di nuovo quando vuoi.",
    failure="Qualcosa è andato storto mentre rispondevo. Riprova; se continua a succedere, chiedi a una persona.",
    timeout="La risposta ha richiesto troppo tempo. Riprova tra un momento.",
    refusal={
        "out_of_scope": "Questo va oltre ciò che copre la documentazione, quindi non posso rispondere.",
        "capability": "Posso rispondere solo a domande sulla documentazione; non posso aiutarti con questa richiesta.",
    },
    clarify={
        "vague": "Puoi dirmi qualcosa in più? Che cosa stai cercando di fare, e con quale funzione o prodotto?",
        "ambiguous": "Ho trovato diverse sezioni che potrebbero andare bene. Quale intendi?",
        "unverified": "Non riesco a dare una risposta supportata dalla documentazione. Puoi riformulare la domanda?",
        "no_coverage": "Non ho trovato questo nella documentazione. Intendevi uno di questi argomenti?",
        "rephrase": "Certo, fai di nuovo la tua domanda con altre parole.",
        "generic": "Puoi chiarire la tua domanda?",
        "thanked": "Mi fa piacere che sia servito. Se ti serve altro, chiedi pure qui.",
    },
    rephrase_label="Riformula la domanda",
    rate_limited="Stai facendo domande più in fretta di quanto riesca a rispondere. Aspetta un momento e riprova.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "Il budget di risposte di oggi è esaurito. "
        "Riprova domani o chiedi a una persona."
    ),
    channel_not_allowed="Non sono configurato per rispondere in questo canale.",
    invite_needed="Non sono membro di questo canale, quindi non posso rispondere qui. Invitami con `{command} @{bot}` "
    "e poi chiedi di nuovo.",
    empty_question="Scrivi una domanda dopo la menzione.",
    question_too_long="Questa domanda è troppo lunga. Resta sotto i {limit} caratteri.",
    unreadable_input="Non riesco a leggere questo messaggio. Invia la domanda come testo semplice.",
    button_used="Questa scelta è già stata usata.",
    button_other_thread="Questo pulsante appartiene a un'altra conversazione.",
    button_expired="Questa scelta è scaduta. Fai di nuovo la domanda.",
    feedback_helpful="Utile",
    feedback_not_helpful="Non utile",
    ask_human="Chiedi a una persona",
    human_handoff="Ho chiesto a una persona del team di dare un'occhiata a questa conversazione.",
    feedback_thanks="Grazie per il feedback!",
    sources_heading="Fonti",
    user_asked="{user} ha chiesto:",
    you_chose="Hai scelto: {label}",
)

LEXICON = Lexicon(
    troubleshooting="risoluzione dei problemi non funziona",
    yes_no=r"^\s*(?:(?:è|e')\s+possibile|si\s+può|si\s+possono|c'è|c'é|ci\s+sono|ha|hanno|ho|è|sono|può|possono|posso|funziona|supporta|include|esiste|serve|va|riesco)(?=[\s?]|$)",
    presence=r"\b(?:ha|hanno|c'è|ci\s+sono|include|supporta|viene\s+(?:venduto|venduta|fornito|fornita)\s+con)(?=[\s?]|$)|\bcompatibile\s+con\b",
    how_to=r"^\W*come\b|\bpassaggi\b",
    how_many=r"\bquant[ie]\b",
    other=r"\bcos['’]\s*altro\b|\bcosa\s+altro\b|\bqualcos['’]\s*altro\b|\baltr[aeio]\s+(?:soluzion[ei]|ragion[ei]|caus[ae]|modo|modi|opzion[ei]|idea|idee)\b",
    amount=r"\bquant[oaie]\b",
    stopwords=words(
        """il lo la i gli le l un uno una e ed o ma se non sì di del dello della dei degli delle da dal dalla dai in
        nel nella nei con su sul sulla per tra fra a al allo alla ai agli alle che cosa come quale quali quando dove
        perché perchè chi quanto quanti quanta quante è sono era essere sta stanno ho hai ha abbiamo hanno avere
        fare fa faccio posso puoi può possono potrei devo deve mi me mio mia miei mie ti tu tuo tua si io lui lei
        noi voi loro questo questa questi queste quello quella quelli ciò funziona funzionano funzionare usare uso
        utilizzare aiuto aiutare aiutami favore ciao salve grazie problema problemi qualcosa niente nulla molto più
        anche già ancora modo c'è com'è cos'è dov'è qual'è serve va"""
    ),
    thanks=("grazie mille", "grazie"),
    alternatives=("o", "oppure"),
    deictics=("questo", "questa", "quello", "quella", "ciò", "esso", "essa", "lo", "la", "li", "le"),
    possessives=words("suo sua suoi sue loro"),
    prepositions=words("di del della dei delle con su sul sulla in nel nella da"),
    determiners=words("il lo la gli le un uno una mio mia miei mie tuo tua questo questa quello quella"),
    generic_nouns=words(
        "opzione opzioni impostazione impostazioni menu funzione"
        " funzioni tasto tasti pulsante pulsanti passaggio"
    ),
    infinitive=r"\w{2,}(?:are|ere|ire|arsi|ersi|irsi)|\w{2,}(?:ar|er|ir)(?:lo|la|li|le|ne)",
    verb_pronouns=words("lo la li le ne gli l si"),
    attached_pronoun=r"\w{2,}(?:ar|er|ir|ando|endo)(?:lo|la|li|le)",
    capability=(
        ("code", r"\b(scrivi|scrivimi)\b.{0,15}\b(programma|script|codice|funzione)\b"),
        ("code", r"\b(genera|generami)\b.{0,15}\b(script|codice)\b"),
        ("injection", r"\b(ignora|dimentica|tralascia|ignorate)\b.{0,40}\b(istruzioni|regole|indicazioni|prompt)\b"),
        ("prompt_leak", r"\b(mostra|mostrami|rivela|dimmi|ripeti|stampa)\b.{0,30}"
                        r"\b(prompt|(?:tue|sue) istruzioni|istruzioni (?:di sistema|nascoste|segrete))\b"),
        ("roleplay", r"\b(fingi|fai finta|recita la parte|gioco di ruolo|comportati come|da ora in poi sei)\b"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say="La documentazione non dice questo: «{question}»",
    closest_they_come="La cosa più vicina che ho trovato è:",
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated="aggiornato il {date}",
    answered_by="risposta di {person} in {channel} il {date}",
)
