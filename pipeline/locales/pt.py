"""Portuguese (Brazilian: "você", "equipe", "tela"; a reader in Portugal understands it)."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "Portuguese"  # in English

TEXTS = Texts(
    answer_lead_in="Veja o que diz a documentação:",
    team_answer_lead_in="Veja o que a equipe respondeu antes:",
    no_coverage="Parece que a documentação não trata deste assunto.",
    closest_sections="As seções mais próximas que encontrei:",
    offline_note="Respondido sem o modelo de linguagem, que não estava disponível.",
    retry_label="Tentar novamente",
    keyword_only_note=(
        "Encontrado só por palavras-chave: o índice semântico não estava "
        "disponível, então os resultados podem ser menos precisos."
    ),
    busy="Estou respondendo a outras perguntas agora. Tente novamente em um minuto.",
    stopped="Parei, como você pediu. Pergunte de novo quando quiser.",
    failure="Algo deu errado enquanto eu respondia. Tente novamente; se continuar acontecendo, peça ajuda a uma "
    "pessoa.",
    timeout="A resposta demorou demais. Tente novamente daqui a pouco.",
    refusal={
        "out_of_scope": "Isso está fora do que a documentação cobre, então não posso responder.",
        "capability": "Só posso responder a perguntas sobre a documentação; não posso ajudar com esse pedido.",
    },
    clarify={
        "vague": "Pode me contar um pouco mais? O que você está tentando fazer, e com qual recurso ou produto?",
        "ambiguous": "Encontrei várias seções que podem servir. Qual delas você quer dizer?",
        "unverified": "Não consegui montar uma resposta apoiada pela documentação. Pode reformular a pergunta?",
        "no_coverage": "Não encontrei isso na documentação. Você quis dizer um destes temas?",
        "rephrase": "Claro, faça sua pergunta de novo com outras palavras.",
        "generic": "Pode esclarecer sua pergunta?",
        "thanked": "Que bom que ajudou. Se precisar de mais alguma coisa, pergunte aqui.",
    },
    rephrase_label="Reformular minha pergunta",
    rate_limited="Você está perguntando mais rápido do que consigo responder. Espere um momento e tente novamente.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "O limite de respostas de hoje acabou. "
        "Tente novamente amanhã ou pergunte a uma pessoa."
    ),
    channel_not_allowed="Não estou configurado para responder neste canal.",
    invite_needed="Não sou membro deste canal, então não posso responder aqui. Me convide com `{command} @{bot}` "
    "e pergunte de novo.",
    empty_question="Escreva uma pergunta depois da menção.",
    question_too_long="Essa pergunta é longa demais. Use menos de {limit} caracteres.",
    unreadable_input="Não consegui ler essa mensagem. Envie sua pergunta como texto simples.",
    button_used="Esta opção já foi usada.",
    button_other_thread="Este botão pertence a outra conversa.",
    button_expired="Esta opção expirou. Pergunte novamente.",
    feedback_helpful="Útil",
    feedback_not_helpful="Não ajudou",
    ask_human="Falar com uma pessoa",
    human_handoff="Pedi a uma pessoa da equipe para dar uma olhada nesta conversa.",
    feedback_thanks="Obrigado pelo feedback!",
    sources_heading="Fontes",
    user_asked="{user} perguntou:",
    you_chose="Você escolheu: {label}",
)

LEXICON = Lexicon(
    troubleshooting="solução de problemas não funciona",
    yes_no=r"^\s*(?:(?:ela|ele|eles|elas|isso|você|vocês)\s+)?(?:tem|têm|possui|pode|podem|posso|dá\s+pra|dá\s+para|é|são|está|estão|há|existe|funciona|suporta|aceita|inclui|vem|serve|consigo|consegue|será\s+que)\b",
    presence=r"\b(?:tem|têm|há|vem\s+com|possui|inclui|suporta|compatível\s+com)\b",
    how_to=r"^\W*como\b|\bpassos\b",
    how_many=r"\bquant[oa]s\b",
    other=r"\b(?:o\s+)?que\s+mais\b|\balgo\s+mais\b|\boutr[ao]s?\s+(?:formas?|maneiras?|opção|opções|razão|razões|causas?|coisas?|solução|soluções|ideias?)\b",
    amount=r"\bquant[oa]s?\b",
    stopwords=words(
        """o a os um uma uns umas e ou mas se não de do da dos das no na nos nas ao aos à às em com por para pelo
        pela pelos pelas sobre sem que quê como qual quais quando onde porque porquê quem é são era ser estar está
        estão estou há tem têm tenho ter fazer faz faço fiz posso pode podem poderia devo deve preciso me meu minha
        meus minhas seu sua seus suas você vocês ele ela eles elas nós lhe isso isto esse essa este esta aquilo
        aquele aquela funciona funcionam funcionar usar uso ajuda ajudar ajude favor olá oi obrigado obrigada
        problema problemas algo nada muito mais também já coisa serve dá pra vai consigo consegue quero queria
        gostaria saber"""
    ),
    thanks=("muito obrigado", "muito obrigada", "obrigado", "obrigada", "valeu"),
    alternatives=("ou",),
    deictics=("isso", "isto", "aquilo", "ele", "ela", "eles", "elas", "esse", "essa", "este", "esta", "lo", "la"),
    possessives=words("dele dela deles delas"),
    prepositions=words("de do da dos das com em no na nos nas sobre"),
    determiners=words("o a os um uma meu minha meus minhas seu sua seus suas esse essa este esta"),
    generic_nouns=words(
        "opção opções configuração configurações ajuste ajustes"
        " menu função funções botão botões passo passos"
    ),
    infinitive=r"\w{2,}(?:ar|er|ir)(?:-(?:lo|la|los|las|o|a|os|as|se))?",
    verb_pronouns=words("o a os as lo la los las se"),
    attached_pronoun=r"\w{2,}-(?:lo|la|los|las|o|a|os|as)",
    capability=(
        ("code", r"\b(escreva|escreve)\b.{0,15}\b(programa|script|código|função)\b"),
        ("code", r"\b(crie|gere)\b.{0,15}\b(script|código)\b"),
        ("injection", r"\b(ignore|ignora|esqueça|esquece|desconsidere)\b.{0,40}"
                      r"\b(instruções|regras|orientações|prompt)\b"),
        ("prompt_leak", r"\b(mostre|mostra|revele|revela|diga|repita)\b.{0,30}"
                        r"\b(prompt|(?:suas|tuas) instruções|instruções (?:do sistema|ocultas|secretas))\b"),
        ("roleplay", r"\b(finja|faça de conta|interprete o papel|aja como|atue como|a partir de agora você é)\b"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say="A documentação não diz isto: “{question}”",
    closest_they_come="O mais próximo que encontrei é:",
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated="atualizado em {date}",
    answered_by="respondido por {person} em {channel} no dia {date}",
)
