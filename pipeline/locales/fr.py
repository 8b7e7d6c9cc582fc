"""French."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "French"  # in English

TEXTS = Texts(
    answer_lead_in="Voici ce que dit la documentation :",
    team_answer_lead_in="Voici ce que l'équipe a répondu :",
    no_coverage="La documentation ne semble pas traiter ce sujet.",
    closest_sections="Les sections les plus proches que j'ai trouvées :",
    offline_note="Réponse produite sans le modèle de langage, qui n'était pas disponible.",
    retry_label="Réessayer",
    keyword_only_note=(
        "Trouvé par mots-clés uniquement : l'index sémantique était "
        "indisponible, les résultats peuvent être moins précis."
    ),
    busy="Je traite beaucoup d'autres questions en ce moment. Réessayez dans une minute.",
    stopped="Arrêté, comme demandé. Reposez la question quand vous voulez.",
    failure="Un problème est survenu pendant ma réponse. Réessayez ; si cela se reproduit, demandez à une personne.",
    timeout="La réponse a pris trop de temps. Réessayez dans un instant.",
    refusal={
        "out_of_scope": "Cela sort du champ de la documentation, je ne peux donc pas y répondre.",
        "capability": "Je ne réponds qu'aux questions sur la documentation ; je ne peux pas aider avec cette demande.",
    },
    clarify={
        "vague": "Pouvez-vous préciser ? Que cherchez-vous à faire, et avec quelle fonction ou quel produit ?",
        "ambiguous": "J'ai trouvé plusieurs sections qui pourraient convenir. Laquelle voulez-vous dire ?",
        "unverified": "Je n'ai pas pu construire une réponse appuyée par la documentation. Pouvez-vous reformuler ?",
        "no_coverage": "Je n'ai pas trouvé cela dans la documentation. Pensiez-vous à l'un de ces sujets ?",
        "rephrase": "Bien sûr, reposez votre question avec d'autres mots.",
        "generic": "Pouvez-vous préciser votre question ?",
        "thanked": "Tant mieux si ça a aidé. Si autre chose se présente, posez votre question ici.",
    },
    rephrase_label="Reformuler ma question",
    rate_limited="Vous posez des questions plus vite que je ne peux répondre. Patientez un instant puis réessayez.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "Le budget de réponses du jour est épuisé. "
        "Réessayez demain ou demandez à une personne."
    ),
    channel_not_allowed="Je ne suis pas configuré pour répondre dans ce canal.",
    invite_needed="Je ne suis pas membre de ce canal, je ne peux donc pas y répondre. Invitez-moi avec `{command} "
    "@{bot}`, puis reposez votre question.",
    empty_question="Écrivez une question après la mention.",
    question_too_long="Cette question est trop longue. Restez sous {limit} caractères.",
    unreadable_input="Je n'ai pas pu lire ce message. Envoyez votre question en texte simple.",
    button_used="Ce choix a déjà été utilisé.",
    button_other_thread="Ce bouton appartient à une autre conversation.",
    button_expired="Ce choix a expiré. Posez la question à nouveau.",
    feedback_helpful="Utile",
    feedback_not_helpful="Pas utile",
    ask_human="Demander à une personne",
    human_handoff="J'ai demandé à une personne de l'équipe de regarder ce fil.",
    feedback_thanks="Merci pour votre retour !",
    sources_heading="Sources",
    user_asked="{user} a demandé :",
    you_chose="Votre choix : {label}",
)

LEXICON = Lexicon(
    troubleshooting="dépannage problème ne fonctionne pas",
    yes_no=r"^\s*(?:est-ce|est-il|est-elle|peut-on|puis-je|peut-il|peut-elle|a-t-il|a-t-elle|y\s+a-t-il|existe-t-il|faut-il)\b|\best-ce\s+que?\b",
    presence=r"\b(?:a-t-il|a-t-elle|ont-ils|ont-elles|y\s+a-t-il|possède|comporte|(?:il|elle)\s+a|prend\s+en\s+charge|supporte|compatible\s+avec)\b|\blivrée?\s+avec\b",
    how_to=r"^\W*comment\b|\bétapes\b",
    how_many=r"\bcombien\s+(?:de\s+|d['’])(?!temps\b)",
    other=r"\bquoi\s+d['’]autre\b|\bautre\s+chose\b|\bd['’]autres?\s+(?:solutions?|raisons?|causes?|moyens?|options?|idées?|pistes?)\b|\bune\s+autre\s+(?:solution|raison|cause|façon|option|idée|piste)\b",
    amount=r"\bcombien\b",
    stopwords=words(
        """le la les l un une des du de d et ou mais si ne pas non oui à au aux en dans sur sous par pour avec sans
        que qu quoi qui quel quelle quels quelles comment où quand pourquoi est sont été être suis es ai as avons
        avez ont a fait faire peut peux pouvez puis dois je j me m moi mon ma mes tu te toi ton ta tes il elle ils
        elles on nous vous se s son sa ses leur leurs ce c cet cette ces ça cela ceci y fonctionne fonctionnent
        marche marchent utiliser aide aider aidez svp merci bonjour salut problème problèmes chose truc quelque
        très plus aussi"""
    ),
    thanks=("merci beaucoup", "merci"),
    alternatives=("ou",),
    deictics=("ça", "cela", "ceci", "il", "elle", "le", "la", "les"),
    possessives=words("sa ses leur leurs"),
    impersonal=("y a-t-il", "il y a", "faut-il", "il faut", "s'agit-il"),
    prepositions=words("de du des avec sur dans depuis"),
    determiners=words("le la les l mon ma mes ton ta tes un une"),
    generic_nouns=words(
        "option options réglage réglages paramètre paramètres"
        " menu fonction fonctions bouton boutons étape étapes"
    ),
    infinitive=r"\w{2,}(?:er|ir)|\w*(?:eindre|ettre|endre)",
    verb_pronouns=words("le la les l se"),
    capability=(
        ("code", r"\b(écris|écrivez|écrire)\b.{0,15}\b(programme|script|code|fonction)\b"),
        ("injection", r"\b(ignore|ignorez|oublie|oubliez)\b.{0,40}\b(instructions|consignes|règles|prompt)\b"),
        ("prompt_leak", r"\b(montre|montre-moi|révèle|affiche|répète)\b.{0,30}\b(prompt|instructions|consignes)\b"),
        ("roleplay", r"\b(fais semblant|faites semblant|joue le rôle|jeu de rôle|à partir de maintenant tu es)\b"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say='La documentation ne dit pas ceci : « {question} »',
    closest_they_come="Ce qui s'en rapproche le plus :",
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated='mis à jour le {date}',
    answered_by='répondu par {person} dans {channel} le {date}',
)
