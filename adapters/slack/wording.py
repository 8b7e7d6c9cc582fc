"""Slack-only wording (progress line, task timeline, assistant panel, hand-over ping, /ask usage), in every language
of `pipeline.locales`, kept in one place for review.

Everything shared with other platforms (refused channel, "asked:", chosen button, sources heading, failure) comes
from `pipeline.locales`; a language missing here falls back to English. Slack's user locales ("pt-BR", "zh-TW",
"ja-JP", "es-LA") pick their language's wording.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.locales import TRADITIONAL_CHINESE, base_language, chinese


@dataclass(frozen=True, slots=True)
class SlackWording:
    thinking: str  # placeholder shown until the answer lands
    assistant_status: str  # assistant thread status ("is thinking...")
    handover: str  # "{support}" is pinged for "ask a human"
    usage_ask: str  # /ask without a question
    suggested_prompts_title: str
    suggested_prompts: tuple[str, ...]
    choose: str  # the small button beside each clarification choice
    open_source: str  # the button on a source card
    # the task timeline shown while a question runs (and the one status message where streaming fails)
    working: str  # the line above the steps
    task_read: str
    task_understand: str
    task_search: str
    task_search_again: str
    task_write: str
    task_rewrite: str
    task_check: str
    task_check_again: str
    task_clarify: str
    found_language: str  # "{language}"
    found_sections: str  # "{count}"
    checked: dict[str, str]  # the quality role's decision → what it means for the person
    # the agent messaging experience
    greeting_title: str  # above the suggested prompts in the Messages tab
    greeting: str  # the first message in a new DM
    prompt_about: str  # a suggested prompt's message: "{topic}"
    only_asker_stops: str  # someone else pressed stop


_WORDING: dict[str, SlackWording] = {
    "en": SlackWording(
        thinking=":hourglass_flowing_sand: Looking through the docs…",
        assistant_status="is thinking...",
        handover="{support}, could you help here? {user} would like a human to take a look.",
        usage_ask="Ask me something after the command, e.g. `{command} how do I reset my password?`",
        suggested_prompts_title="Try asking",
        suggested_prompts=("What can you help me with?", "Where do I start with the docs?"),
        choose="Choose",
        open_source="Open",
        working="Working on your question…",
        task_read="Reading your question",
        task_understand="Understanding what you ask",
        task_search="Searching the docs",
        task_search_again="Searching again",
        task_write="Writing the answer",
        task_rewrite="Rewriting the answer",
        task_check="Checking the answer against the sources",
        task_check_again="Checking again",
        task_clarify="Preparing a question back",
        found_language="Language: {language}",
        found_sections="{count} sections found",
        checked={"approve": "Every point has a source", "research": "Not enough yet: searching again",
                 "regenerate": "Not quite right: rewriting", "clarify": "Needs a question back"},
        greeting_title="Ask me about the docs, for example:",
        greeting="Hi! I answer questions from your team's documentation, with the sections I used. Ask me anything "
        "here, each question gets its own thread.",
        prompt_about="What do the docs say about {topic}?",
        only_asker_stops="Only the person who asked can stop this answer.",
    ),
    "de": SlackWording(
        thinking=":hourglass_flowing_sand: Ich suche in der Dokumentation…",
        assistant_status="denkt nach...",
        handover="{support}, könnt ihr hier helfen? {user} möchte mit einem Menschen sprechen.",
        usage_ask="Stell mir nach dem Befehl eine Frage, z. B. `{command} wie setze ich mein Passwort zurück?`",
        suggested_prompts_title="Frag zum Beispiel",
        suggested_prompts=("Wobei kannst du mir helfen?", "Wo fange ich in der Dokumentation an?"),
        choose="Auswählen",
        open_source="Öffnen",
        working="Ich arbeite an deiner Frage…",
        task_read="Frage lesen",
        task_understand="Verstehen, was du fragst",
        task_search="In der Dokumentation suchen",
        task_search_again="Noch einmal suchen",
        task_write="Antwort schreiben",
        task_rewrite="Antwort neu schreiben",
        task_check="Antwort mit den Quellen abgleichen",
        task_check_again="Noch einmal prüfen",
        task_clarify="Eine Rückfrage vorbereiten",
        found_language="Sprache: {language}",
        found_sections="{count} Abschnitte gefunden",
        checked={"approve": "Jede Aussage hat eine Quelle", "research": "Noch nicht genug: suche weiter",
                 "regenerate": "Nicht ganz richtig: schreibe neu", "clarify": "Braucht eine Rückfrage"},
        greeting_title="Frag mich zur Dokumentation, zum Beispiel:",
        greeting="Hallo! Ich beantworte Fragen aus der Dokumentation deines Teams, mit den Abschnitten, die ich "
        "verwendet habe. Frag mich hier einfach, jede Frage bekommt ihren eigenen Thread.",
        prompt_about="Was steht in der Dokumentation zu {topic}?",
        only_asker_stops="Nur die Person, die gefragt hat, kann diese Antwort anhalten.",
    ),
    "es": SlackWording(
        thinking=":hourglass_flowing_sand: Buscando en la documentación…",
        assistant_status="está pensando...",
        handover="{support}, ¿alguien puede ayudar aquí? {user} quiere que una persona lo revise.",
        usage_ask="Escríbeme una pregunta después del comando, p. ej. `{command} ¿cómo restablezco mi contraseña?`",
        suggested_prompts_title="Prueba a preguntar",
        suggested_prompts=("¿En qué me puedes ayudar?", "¿Por dónde empiezo con la documentación?"),
        choose="Elegir",
        open_source="Abrir",
        working="Trabajando en tu pregunta…",
        task_read="Leyendo tu pregunta",
        task_understand="Entendiendo lo que preguntas",
        task_search="Buscando en la documentación",
        task_search_again="Buscando de nuevo",
        task_write="Escribiendo la respuesta",
        task_rewrite="Reescribiendo la respuesta",
        task_check="Comprobando la respuesta con las fuentes",
        task_check_again="Comprobando de nuevo",
        task_clarify="Preparando una pregunta para ti",
        found_language="Idioma: {language}",
        found_sections="{count} secciones encontradas",
        checked={"approve": "Cada punto tiene una fuente", "research": "Aún no es suficiente: buscando de nuevo",
                 "regenerate": "No es del todo correcta: reescribiendo", "clarify": "Hace falta preguntarte algo"},
        greeting_title="Pregúntame sobre la documentación, por ejemplo:",
        greeting="¡Hola! Respondo preguntas con la documentación de tu equipo e indico las secciones que usé. "
        "Pregúntame lo que quieras aquí; cada pregunta tiene su propio hilo.",
        prompt_about="¿Qué dice la documentación sobre {topic}?",
        only_asker_stops="Solo la persona que preguntó puede detener esta respuesta.",
    ),
    "fr": SlackWording(
        thinking=":hourglass_flowing_sand: Je cherche dans la documentation…",
        assistant_status="réfléchit...",
        handover="{support}, quelqu'un peut aider ici ? {user} aimerait qu'une personne y jette un œil.",
        usage_ask="Pose-moi une question après la commande, par ex. "
        "`{command} comment réinitialiser mon mot de passe ?`",
        suggested_prompts_title="Essaie de demander",
        suggested_prompts=("En quoi peux-tu m'aider ?", "Par où commencer dans la documentation ?"),
        choose="Choisir",
        open_source="Ouvrir",
        working="Je travaille sur ta question…",
        task_read="Lecture de ta question",
        task_understand="Compréhension de ta demande",
        task_search="Recherche dans la documentation",
        task_search_again="Nouvelle recherche",
        task_write="Rédaction de la réponse",
        task_rewrite="Réécriture de la réponse",
        task_check="Vérification de la réponse avec les sources",
        task_check_again="Nouvelle vérification",
        task_clarify="Préparation d'une question en retour",
        found_language="Langue : {language}",
        found_sections="{count} sections trouvées",
        checked={"approve": "Chaque point a une source", "research": "Pas encore assez : nouvelle recherche",
                 "regenerate": "Pas tout à fait juste : réécriture", "clarify": "Il faut te poser une question"},
        greeting_title="Pose-moi une question sur la documentation, par exemple :",
        greeting="Salut ! Je réponds aux questions à partir de la documentation de ton équipe, en citant les sections "
        "utilisées. Pose-moi ta question ici : chaque question a son propre fil.",
        prompt_about="Que dit la documentation sur {topic} ?",
        only_asker_stops="Seule la personne qui a posé la question peut arrêter cette réponse.",
    ),
    "ru": SlackWording(
        thinking=":hourglass_flowing_sand: Ищу в документации…",
        assistant_status="думает...",
        handover="{support}, можете помочь? {user} хочет, чтобы вопрос посмотрел человек.",
        usage_ask="Задай вопрос после команды, например: `{command} как сбросить пароль?`",
        suggested_prompts_title="Попробуй спросить",
        suggested_prompts=("С чем ты можешь помочь?", "С чего начать в документации?"),
        choose="Выбрать",
        open_source="Открыть",
        working="Работаю над твоим вопросом…",
        task_read="Читаю вопрос",
        task_understand="Разбираюсь, о чём ты спрашиваешь",
        task_search="Ищу в документации",
        task_search_again="Ищу ещё раз",
        task_write="Пишу ответ",
        task_rewrite="Переписываю ответ",
        task_check="Сверяю ответ с источниками",
        task_check_again="Проверяю ещё раз",
        task_clarify="Готовлю уточняющий вопрос",
        found_language="Язык: {language}",
        found_sections="Найдено разделов: {count}",
        checked={"approve": "У каждого утверждения есть источник", "research": "Пока недостаточно: ищу ещё",
                 "regenerate": "Не совсем верно: переписываю", "clarify": "Нужен уточняющий вопрос"},
        greeting_title="Спроси меня о документации, например:",
        greeting="Привет! Я отвечаю на вопросы по документации твоей команды и показываю разделы, которые "
        "использовал. Спрашивай здесь: у каждого вопроса будет своя ветка.",
        prompt_about="Что сказано в документации на тему «{topic}»?",
        only_asker_stops="Остановить этот ответ может только тот, кто задал вопрос.",
    ),
    "zh": SlackWording(
        thinking=":hourglass_flowing_sand: 正在查阅文档…",
        assistant_status="正在思考...",
        handover="{support}，可以帮忙看一下吗？{user} 希望由人工来处理。",
        usage_ask="请在命令后面输入问题，例如：`{command} 如何重置密码？`",
        suggested_prompts_title="试着问问",
        suggested_prompts=("你能帮我做什么？", "文档应该从哪里开始看？"),
        choose="选择",
        open_source="打开",
        working="正在处理你的问题…",
        task_read="阅读你的问题",
        task_understand="理解你的问题",
        task_search="搜索文档",
        task_search_again="再次搜索",
        task_write="撰写回答",
        task_rewrite="重写回答",
        task_check="根据来源核对回答",
        task_check_again="再次核对",
        task_clarify="准备一个追问",
        found_language="语言：{language}",
        found_sections="找到 {count} 个章节",
        checked={"approve": "每一点都有来源", "research": "信息还不够：再次搜索",
                 "regenerate": "不够准确：正在重写", "clarify": "需要向你确认一下"},
        greeting_title="可以问我关于文档的问题，例如：",
        greeting="你好！我根据你们团队的文档回答问题，并列出我引用的章节。有问题直接在这里问，每个问题都有自己的话题串。",
        prompt_about="文档中关于{topic}是怎么说的？",
        only_asker_stops="只有提问的人才能停止这个回答。",
    ),
    "pt": SlackWording(
        thinking=":hourglass_flowing_sand: Procurando na documentação…",
        assistant_status="está pensando...",
        handover="{support}, alguém pode ajudar aqui? {user} gostaria que uma pessoa desse uma olhada.",
        usage_ask="Faça uma pergunta depois do comando, por exemplo: `{command} como redefino minha senha?`",
        suggested_prompts_title="Experimente perguntar",
        suggested_prompts=("Em que você pode me ajudar?", "Por onde começo na documentação?"),
        choose="Escolher",
        open_source="Abrir",
        working="Trabalhando na sua pergunta…",
        task_read="Lendo sua pergunta",
        task_understand="Entendendo o que você pergunta",
        task_search="Pesquisando na documentação",
        task_search_again="Pesquisando de novo",
        task_write="Escrevendo a resposta",
        task_rewrite="Reescrevendo a resposta",
        task_check="Conferindo a resposta com as fontes",
        task_check_again="Conferindo de novo",
        task_clarify="Preparando uma pergunta para você",
        found_language="Idioma: {language}",
        found_sections="{count} seções encontradas",
        checked={"approve": "Cada ponto tem uma fonte", "research": "Ainda não é suficiente: pesquisando de novo",
                 "regenerate": "Não está totalmente certa: reescrevendo", "clarify": "Preciso perguntar algo a você"},
        greeting_title="Pergunte sobre a documentação, por exemplo:",
        greeting="Oi! Respondo perguntas com base na documentação da sua equipe e mostro as seções que usei. "
        "Pergunte o que quiser aqui; cada pergunta ganha sua própria conversa.",
        prompt_about="O que a documentação diz sobre {topic}?",
        only_asker_stops="Só a pessoa que perguntou pode interromper esta resposta.",
    ),
    "it": SlackWording(
        thinking=":hourglass_flowing_sand: Sto cercando nella documentazione…",
        assistant_status="sta pensando...",
        handover="{support}, qualcuno può aiutare qui? {user} vorrebbe che una persona ci desse un'occhiata.",
        usage_ask="Fammi una domanda dopo il comando, ad es. `{command} come reimposto la password?`",
        suggested_prompts_title="Prova a chiedere",
        suggested_prompts=("In cosa puoi aiutarmi?", "Da dove comincio con la documentazione?"),
        choose="Scegli",
        open_source="Apri",
        working="Sto lavorando alla tua domanda…",
        task_read="Lettura della domanda",
        task_understand="Comprensione della richiesta",
        task_search="Ricerca nella documentazione",
        task_search_again="Nuova ricerca",
        task_write="Scrittura della risposta",
        task_rewrite="Riscrittura della risposta",
        task_check="Verifica della risposta con le fonti",
        task_check_again="Nuova verifica",
        task_clarify="Preparazione di una domanda di chiarimento",
        found_language="Lingua: {language}",
        found_sections="{count} sezioni trovate",
        checked={"approve": "Ogni punto ha una fonte", "research": "Non basta ancora: nuova ricerca",
                 "regenerate": "Non del tutto corretta: la riscrivo", "clarify": "Serve una domanda di chiarimento"},
        greeting_title="Chiedimi qualcosa sulla documentazione, ad esempio:",
        greeting="Ciao! Rispondo alle domande usando la documentazione del tuo team e indico le sezioni che ho usato. "
        "Chiedimi pure qui: ogni domanda ha il suo thread.",
        prompt_about="Cosa dice la documentazione su {topic}?",
        only_asker_stops="Solo chi ha fatto la domanda può interrompere questa risposta.",
    ),
    "ja": SlackWording(
        thinking=":hourglass_flowing_sand: ドキュメントを調べています…",
        assistant_status="が考えています...",
        handover="{support} 対応をお願いできますか？{user} さんが担当者による確認を希望しています。",
        usage_ask="コマンドの後に質問を入力してください。例：`{command} パスワードをリセットするには？`",
        suggested_prompts_title="質問の例",
        suggested_prompts=("何を手伝ってもらえますか？", "ドキュメントはどこから読めばいいですか？"),
        choose="選択",
        open_source="開く",
        working="質問に取り組んでいます…",
        task_read="質問を読んでいます",
        task_understand="質問の意図を理解しています",
        task_search="ドキュメントを検索しています",
        task_search_again="もう一度検索しています",
        task_write="回答を作成しています",
        task_rewrite="回答を書き直しています",
        task_check="回答を出典と照合しています",
        task_check_again="もう一度確認しています",
        task_clarify="確認の質問を準備しています",
        found_language="言語：{language}",
        found_sections="{count} 件のセクションが見つかりました",
        checked={"approve": "すべての内容に出典があります", "research": "まだ不十分です：もう一度検索します",
                 "regenerate": "正確ではありません：書き直します", "clarify": "確認の質問が必要です"},
        greeting_title="ドキュメントについて質問してください。例：",
        greeting="こんにちは！チームのドキュメントをもとに、参照したセクションを添えて質問にお答えします。"
        "ここで何でも質問してください。質問ごとにスレッドが作られます。",
        prompt_about="{topic}についてドキュメントには何と書かれていますか？",
        only_asker_stops="この回答を停止できるのは質問した人だけです。",
    ),
    "ko": SlackWording(
        thinking=":hourglass_flowing_sand: 문서를 찾아보고 있어요…",
        assistant_status="생각 중이에요...",
        handover="{support} 여기 도와주실 수 있나요? {user} 님이 담당자의 확인을 원해요.",
        usage_ask="명령어 뒤에 질문을 입력해 주세요. 예: `{command} 비밀번호를 어떻게 재설정하나요?`",
        suggested_prompts_title="이렇게 물어보세요",
        suggested_prompts=("무엇을 도와줄 수 있나요?", "문서는 어디서부터 보면 되나요?"),
        choose="선택",
        open_source="열기",
        working="질문을 처리하고 있어요…",
        task_read="질문 읽기",
        task_understand="질문 의도 파악하기",
        task_search="문서 검색하기",
        task_search_again="다시 검색하기",
        task_write="답변 작성하기",
        task_rewrite="답변 다시 작성하기",
        task_check="출처와 답변 대조하기",
        task_check_again="다시 확인하기",
        task_clarify="확인 질문 준비하기",
        found_language="언어: {language}",
        found_sections="섹션 {count}개를 찾았어요",
        checked={"approve": "모든 내용에 출처가 있어요", "research": "아직 부족해요: 다시 검색해요",
                 "regenerate": "정확하지 않아요: 다시 작성해요", "clarify": "확인 질문이 필요해요"},
        greeting_title="문서에 대해 물어보세요. 예를 들어:",
        greeting="안녕하세요! 팀 문서를 바탕으로 질문에 답하고, 참고한 섹션도 함께 알려 드려요. 여기서 무엇이든 "
        "물어보세요. 질문마다 스레드가 따로 만들어져요.",
        prompt_about="문서에서 {topic}에 대해 뭐라고 하나요?",
        only_asker_stops="질문한 사람만 이 답변을 멈출 수 있어요.",
    ),
    "nl": SlackWording(
        thinking=":hourglass_flowing_sand: Ik zoek in de documentatie…",
        assistant_status="denkt na...",
        handover="{support}, kunnen jullie hier helpen? {user} wil graag dat een mens ernaar kijkt.",
        usage_ask="Stel me na het commando een vraag, bijv. `{command} hoe stel ik mijn wachtwoord opnieuw in?`",
        suggested_prompts_title="Vraag bijvoorbeeld",
        suggested_prompts=("Waarmee kun je me helpen?", "Waar begin ik in de documentatie?"),
        choose="Kiezen",
        open_source="Openen",
        working="Ik werk aan je vraag…",
        task_read="Je vraag lezen",
        task_understand="Begrijpen wat je vraagt",
        task_search="Zoeken in de documentatie",
        task_search_again="Opnieuw zoeken",
        task_write="Het antwoord schrijven",
        task_rewrite="Het antwoord herschrijven",
        task_check="Het antwoord controleren aan de hand van de bronnen",
        task_check_again="Opnieuw controleren",
        task_clarify="Een wedervraag voorbereiden",
        found_language="Taal: {language}",
        found_sections="{count} secties gevonden",
        checked={"approve": "Elk punt heeft een bron", "research": "Nog niet genoeg: opnieuw zoeken",
                 "regenerate": "Niet helemaal juist: herschrijven", "clarify": "Een wedervraag is nodig"},
        greeting_title="Vraag me iets over de documentatie, bijvoorbeeld:",
        greeting="Hoi! Ik beantwoord vragen uit de documentatie van je team, met de secties die ik heb gebruikt. "
        "Vraag me hier wat je wilt; elke vraag krijgt een eigen thread.",
        prompt_about="Wat staat er in de documentatie over {topic}?",
        only_asker_stops="Alleen wie de vraag heeft gesteld, kan dit antwoord stoppen.",
    ),
    "pl": SlackWording(
        thinking=":hourglass_flowing_sand: Szukam w dokumentacji…",
        assistant_status="myśli...",
        handover="{support}, możecie tu pomóc? {user} chce, żeby ktoś z zespołu na to spojrzał.",
        usage_ask="Zadaj mi pytanie po poleceniu, np. `{command} jak zresetować hasło?`",
        suggested_prompts_title="Zapytaj na przykład",
        suggested_prompts=("W czym możesz mi pomóc?", "Od czego zacząć w dokumentacji?"),
        choose="Wybierz",
        open_source="Otwórz",
        working="Pracuję nad twoim pytaniem…",
        task_read="Czytam pytanie",
        task_understand="Ustalam, o co pytasz",
        task_search="Szukam w dokumentacji",
        task_search_again="Szukam ponownie",
        task_write="Piszę odpowiedź",
        task_rewrite="Piszę odpowiedź od nowa",
        task_check="Sprawdzam odpowiedź ze źródłami",
        task_check_again="Sprawdzam ponownie",
        task_clarify="Przygotowuję pytanie doprecyzowujące",
        found_language="Język: {language}",
        found_sections="Znalezione sekcje: {count}",
        checked={"approve": "Każda informacja ma źródło", "research": "Jeszcze za mało: szukam dalej",
                 "regenerate": "Nie do końca dobrze: piszę od nowa", "clarify": "Potrzebne pytanie doprecyzowujące"},
        greeting_title="Zapytaj mnie o dokumentację, na przykład:",
        greeting="Cześć! Odpowiadam na pytania na podstawie dokumentacji twojego zespołu i podaję sekcje, z których "
        "korzystałem. Pytaj tutaj o wszystko – każde pytanie dostaje osobny wątek.",
        prompt_about="Co dokumentacja mówi na temat: {topic}?",
        only_asker_stops="Tylko osoba, która zadała pytanie, może zatrzymać tę odpowiedź.",
    ),
}


# Traditional Chinese (Taiwan, Hong Kong): the Simplified wording above in Traditional characters and Taiwan's words,
# made by OpenCC once at import, so there is no second copy to keep in step
_WORDING[TRADITIONAL_CHINESE] = chinese.traditional(_WORDING["zh"])

LANGUAGES: tuple[str, ...] = tuple(_WORDING)


def wording(language: str | None) -> SlackWording:
    """The wording for `language` (an ISO code such as "en" or "de-AT", or a Slack locale such as "pt-BR"), English
    when unknown."""
    return _WORDING.get(base_language(language), _WORDING["en"])
