"""Spanish."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "Spanish"  # in English

TEXTS = Texts(
    answer_lead_in="Esto es lo que dice la documentación:",
    team_answer_lead_in="Esto es lo que respondió el equipo:",
    no_coverage="Parece que la documentación no trata este tema.",
    closest_sections="Las secciones más cercanas que encontré:",
    offline_note="Respondido sin el modelo de lenguaje, que no estaba disponible.",
    retry_label="Intentar de nuevo",
    keyword_only_note=(
        "Encontrado solo por palabras clave: el índice semántico no estaba "
        "disponible, así que los resultados pueden ser menos precisos."
    ),
    busy="Ahora mismo estoy atendiendo otras preguntas. Inténtalo de nuevo en un minuto.",
    stopped="Detenido, como pediste. Vuelve a preguntar cuando quieras.",
    failure="Algo salió mal mientras respondía. Inténtalo de nuevo; si sigue pasando, pide ayuda a una persona.",
    timeout="La respuesta tardó demasiado. Inténtalo de nuevo en un momento.",
    refusal={
        "out_of_scope": "Eso queda fuera de lo que cubre la documentación, así que no puedo responderlo.",
        "capability": "Solo puedo responder preguntas sobre la documentación; no puedo ayudar con esa petición.",
    },
    clarify={
        "vague": "¿Puedes contarme un poco más? ¿Qué intentas hacer y con qué función o producto?",
        "ambiguous": "Encontré varias secciones que podrían encajar. ¿Cuál de ellas buscas?",
        "unverified": "No pude formar una respuesta respaldada por la documentación. ¿Puedes reformular la pregunta?",
        "no_coverage": "No encontré esto en la documentación. ¿Te refieres a alguno de estos temas?",
        "rephrase": "Claro, vuelve a hacer tu pregunta con otras palabras.",
        "generic": "¿Puedes aclarar tu pregunta?",
        "thanked": "Me alegra que te haya servido. Si surge algo más, pregunta aquí.",
    },
    rephrase_label="Reformular mi pregunta",
    rate_limited="Estás preguntando más rápido de lo que puedo responder. Espera un momento e inténtalo de nuevo.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "Se ha agotado el presupuesto de respuestas de hoy. "
        "Inténtalo de nuevo mañana o pregunta a una persona."
    ),
    channel_not_allowed="No estoy configurado para responder en este canal.",
    invite_needed="No soy miembro de este canal, así que no puedo responder aquí. Invítame con `{command} @{bot}` "
    "y vuelve a preguntar.",
    empty_question="Escribe una pregunta después de la mención.",
    question_too_long="Esa pregunta es demasiado larga. Mantenla por debajo de {limit} caracteres.",
    unreadable_input="No pude leer ese mensaje. Envía tu pregunta como texto normal.",
    button_used="Esta opción ya se usó.",
    button_other_thread="Este botón pertenece a otra conversación.",
    button_expired="Esta opción ha caducado. Vuelve a preguntar.",
    feedback_helpful="Útil",
    feedback_not_helpful="No útil",
    ask_human="Preguntar a una persona",
    human_handoff="He pedido a una persona del equipo que revise este hilo.",
    feedback_thanks="¡Gracias por tu opinión!",
    sources_heading="Fuentes",
    user_asked="{user} preguntó:",
    you_chose="Elegiste: {label}",
)

LEXICON = Lexicon(
    troubleshooting="solución de problemas no funciona",
    yes_no=r"^\s*¿?\s*(?:tiene|tienen|tengo|puede|pueden|puedo|podemos|es|son|está|están|hay|se\s+puede|funciona|admite|soporta|incluye|viene|sirve|existe)\b",
    presence=r"\b(?:tiene|tienen|hay|trae|traen|vienen?\s+con|incluye|soporta|admite|compatible\s+con)\b",
    how_to=r"^\W*c[oó]mo\b|\bpasos\b",
    how_many=r"\bcu[áa]nt[oa]s\b",
    other=r"\bqu[eé]\s+m[aá]s\b|\balgo\s+m[aá]s\b|\balguna\s+otra\b|\botr[ao]s?\s+(?:formas?|maneras?|opci[oó]n|opciones|raz[oó]n|razones|causas?|cosas?|soluci[oó]n|soluciones|ideas?)\b",
    amount=r"\bcu[áa]nt[oa]s?\b",
    stopwords=words(
        """el la los las un una unos unas y o pero si no sí de del al a en con por para sobre sin que qué cómo como
        cuál cuáles cuándo dónde por qué quién es son era ser estar está están hay he ha has hace hacer puedo puede
        pueden podría debo tengo tiene me mi mis tu tus su sus yo tú él ella nosotros lo le les se nos te esto eso
        esta este ese esa aquello ello funciona funcionan funcionar usar uso ayuda ayudar ayúdame favor hola gracias
        problema problemas algo nada muy más también ya cosa sirve anda"""
    ),
    thanks=("muchas gracias", "gracias"),
    alternatives=("o", "u"),
    deictics=("eso", "esto", "ello", "aquello", "este", "esta", "ese", "esa"),
    possessives=words("su sus"),
    prepositions=words("de del con en sobre desde"),
    determiners=words("el la los las mi mis tu tus su sus un una"),
    generic_nouns=words("opción opciones ajuste ajustes configuración menú función funciones botón botones paso pasos"),
    infinitive=r"\w{2,}(?:ar|er|ir)(?:se|lo|la|los|las|le|les)?",
    verb_pronouns=words("lo la los las le les se"),
    attached_pronoun=r"\w{2,}(?:ar|er|ir|ando|ándo|iendo|iéndo)(?:lo|la|los|las|le|les)",
    capability=(
        ("code", r"\b(escribe|escríbeme|escribeme|escribir)\b.{0,15}\b(programa|script|código|función)\b"),
        ("injection", r"\b(ignora|olvida|omite)\b.{0,40}\b(instrucciones|reglas|indicaciones|prompt)\b"),
        ("prompt_leak", r"\b(muestra|muéstrame|revela|dime|repite)\b.{0,30}\b(prompt|instrucciones)\b"),
        ("roleplay", r"\b(finge|actúa como|haz de|juego de rol|a partir de ahora eres)\b"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say='La documentación no dice esto: «{question}»',
    closest_they_come='Lo más cercano que encontré es:',
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated='actualizado el {date}',
    answered_by='respondido por {person} en {channel} el {date}',
)
