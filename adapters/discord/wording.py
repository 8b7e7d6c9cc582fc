"""Discord-only wording, in every language of `pipeline.locales`, plus access to the shared localized texts.

Everything shared with other platforms comes from `pipeline.locales`; the few strings below exist only on Discord and
are kept here so they are reviewed in one place. `wording(language)` takes a language code ("ja", the reply's) or a
Discord client locale (`interaction.locale`: "pt-BR", "zh-TW", "es-419", "en-GB"); a language without wording here
falls back to English. The commands' descriptions and the "Ask docbot" menu name reach Discord's per-locale fields
through `adapters.discord.translator.WordingTranslator`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.locales import TRADITIONAL_CHINESE, base_language, chinese, texts
from pipeline.locales.base import Texts

CHOSEN_MARK = "✓ "  # before the label of the pressed button


@dataclass(frozen=True, slots=True)
class DiscordWording:
    only_asker: str  # someone else pressed the asker's buttons
    thread_name_fallback: str  # "{user}": a thread's name when the question has no text line
    ask_command_description: str  # /ask in the command picker (at most 100 characters)
    ask_option_description: str  # /ask's `question` option (at most 100 characters)
    ask_received: str  # /ask's private acknowledgement
    ask_about_command: str  # the message context menu command (right-click a message → Apps), at most 32 characters
    ask_about_empty: str
    publish: str  # under an answer only its asker sees: post it in public
    solved_label: str  # under answers in a forum post
    solved: str
    no_solved_tag: str  # "{tag}"
    only_owner_solves: str
    # a submitted review editor docbot cannot take (said privately; nothing was saved); "Edit" is the review button's
    # own label (bot.answers.review, English), so it stays as it is shown
    edit_unreadable: str
    edit_empty: str


_WORDING: dict[str, DiscordWording] = {
    "en": DiscordWording(
        only_asker="Only the person who asked can use these buttons.",
        thread_name_fallback="Question from {user}",
        ask_command_description="Ask the documentation a question",
        ask_option_description="Your question",
        ask_received="Got your question. The answer follows in the thread.",
        ask_about_command="Ask docbot",
        ask_about_empty="That message has no text to ask about.",
        publish="Post in a thread",
        solved_label="Solved",
        solved="Marked as solved. Thanks!",
        no_solved_tag="This forum has no “{tag}” tag to mark the post with; a moderator can add one.",
        only_owner_solves="Only the person who posted this (or a moderator) can mark it solved.",
        edit_unreadable="This edit could not be read, so nothing was saved. Press Edit on the review message again.",
        edit_empty="The answer was empty, so nothing was saved. Press Edit on the review message again.",
    ),
    "es": DiscordWording(
        only_asker="Solo la persona que preguntó puede usar estos botones.",
        thread_name_fallback="Pregunta de {user}",
        ask_command_description="Hazle una pregunta a la documentación",
        ask_option_description="Tu pregunta",
        ask_received="Recibí tu pregunta. La respuesta llegará en el hilo.",
        ask_about_command="Preguntar a docbot",
        ask_about_empty="Ese mensaje no tiene texto sobre el que preguntar.",
        publish="Publicar en un hilo",
        solved_label="Resuelto",
        solved="Marcado como resuelto. ¡Gracias!",
        no_solved_tag="Este foro no tiene la etiqueta «{tag}» para marcar la publicación; un moderador puede añadirla.",
        only_owner_solves="Solo quien publicó esto (o un moderador) puede marcarlo como resuelto.",
        edit_unreadable="No se pudo leer esta edición, así que no se guardó nada. Vuelve a pulsar «Edit» en el mensaje "
        "de revisión.",
        edit_empty="La respuesta estaba vacía, así que no se guardó nada. Vuelve a pulsar «Edit» en el mensaje de "
        "revisión.",
    ),
    "de": DiscordWording(
        only_asker="Nur die Person, die gefragt hat, kann diese Buttons verwenden.",
        thread_name_fallback="Frage von {user}",
        ask_command_description="Stell der Dokumentation eine Frage",
        ask_option_description="Deine Frage",
        ask_received="Deine Frage ist angekommen. Die Antwort folgt im Thread.",
        ask_about_command="docbot fragen",
        ask_about_empty="Diese Nachricht hat keinen Text, zu dem du fragen kannst.",
        publish="Im Thread posten",
        solved_label="Gelöst",
        solved="Als gelöst markiert. Danke!",
        no_solved_tag="Dieses Forum hat keinen Tag „{tag}“, um den Beitrag zu markieren; ein Moderator kann ihn "
        "anlegen.",
        only_owner_solves="Nur die Person, die das gepostet hat (oder ein Moderator), kann es als gelöst markieren.",
        edit_unreadable="Diese Änderung konnte nicht gelesen werden, daher wurde nichts gespeichert. Drück in der "
        "Review-Nachricht noch einmal auf „Edit“.",
        edit_empty="Die Antwort war leer, daher wurde nichts gespeichert. Drück in der Review-Nachricht noch einmal "
        "auf „Edit“.",
    ),
    "fr": DiscordWording(
        only_asker="Seule la personne qui a posé la question peut utiliser ces boutons.",
        thread_name_fallback="Question de {user}",
        ask_command_description="Pose une question à la documentation",
        ask_option_description="Ta question",
        ask_received="J'ai bien reçu ta question. La réponse suit dans le fil.",
        ask_about_command="Demander à docbot",
        ask_about_empty="Ce message n'a pas de texte sur lequel poser une question.",
        publish="Publier dans un fil",
        solved_label="Résolu",
        solved="Marqué comme résolu. Merci !",
        no_solved_tag="Ce forum n'a pas de tag « {tag} » pour marquer la publication ; un modérateur peut en "
        "ajouter un.",
        only_owner_solves="Seule la personne qui a publié ceci (ou un modérateur) peut le marquer comme résolu.",
        edit_unreadable="Cette modification n'a pas pu être lue : rien n'a été enregistré. Appuie de nouveau sur "
        "« Edit » dans le message de relecture.",
        edit_empty="La réponse était vide : rien n'a été enregistré. Appuie de nouveau sur « Edit » dans le message de "
        "relecture.",
    ),
    "ru": DiscordWording(
        only_asker="Этими кнопками может пользоваться только тот, кто задал вопрос.",
        thread_name_fallback="Вопрос от {user}",
        ask_command_description="Задай вопрос по документации",
        ask_option_description="Твой вопрос",
        ask_received="Вопрос получен. Ответ будет в ветке.",
        ask_about_command="Спросить docbot",
        ask_about_empty="В этом сообщении нет текста, о котором можно спросить.",
        publish="Опубликовать в ветке",
        solved_label="Решено",
        solved="Отмечено как решённое. Спасибо!",
        no_solved_tag="В этом форуме нет тега «{tag}», чтобы отметить пост; модератор может его добавить.",
        only_owner_solves="Отметить это как решённое может только автор поста (или модератор).",
        edit_unreadable="Не удалось прочитать эту правку, поэтому ничего не сохранено. Нажми «Edit» в сообщении для "
        "проверки ещё раз.",
        edit_empty="Ответ был пустым, поэтому ничего не сохранено. Нажми «Edit» в сообщении для проверки ещё раз.",
    ),
    "zh": DiscordWording(
        only_asker="只有提问的人才能使用这些按钮。",
        thread_name_fallback="{user} 的问题",
        ask_command_description="向文档提问",
        ask_option_description="你的问题",
        ask_received="已收到你的问题，回答会发在子区中。",
        ask_about_command="询问 docbot",
        ask_about_empty="这条消息没有可以提问的文字。",
        publish="发到子区",
        solved_label="已解决",
        solved="已标记为已解决。谢谢！",
        no_solved_tag="这个论坛没有可用于标记帖子的“{tag}”标签，版主可以添加一个。",
        only_owner_solves="只有发帖人（或版主）才能将其标记为已解决。",
        edit_unreadable="无法读取这次编辑，因此没有保存任何内容。请在审核消息上再次点击“Edit”。",
        edit_empty="回答为空，因此没有保存任何内容。请在审核消息上再次点击“Edit”。",
    ),
    "pt": DiscordWording(
        only_asker="Só a pessoa que perguntou pode usar estes botões.",
        thread_name_fallback="Pergunta de {user}",
        ask_command_description="Faça uma pergunta à documentação",
        ask_option_description="Sua pergunta",
        ask_received="Recebi sua pergunta. A resposta vem no tópico.",
        ask_about_command="Perguntar ao docbot",
        ask_about_empty="Essa mensagem não tem texto para perguntar.",
        publish="Postar em um tópico",
        solved_label="Resolvido",
        solved="Marcado como resolvido. Obrigado!",
        no_solved_tag="Este fórum não tem a tag “{tag}” para marcar a postagem; um moderador pode adicioná-la.",
        only_owner_solves="Só quem postou isto (ou um moderador) pode marcar como resolvido.",
        edit_unreadable="Não foi possível ler esta edição, então nada foi salvo. Clique em “Edit” na mensagem de "
        "revisão de novo.",
        edit_empty="A resposta estava vazia, então nada foi salvo. Clique em “Edit” na mensagem de revisão de novo.",
    ),
    "it": DiscordWording(
        only_asker="Solo chi ha fatto la domanda può usare questi pulsanti.",
        thread_name_fallback="Domanda di {user}",
        ask_command_description="Fai una domanda alla documentazione",
        ask_option_description="La tua domanda",
        ask_received="Ho ricevuto la tua domanda. La risposta arriva nel thread.",
        ask_about_command="Chiedi a docbot",
        ask_about_empty="Quel messaggio non ha testo su cui fare una domanda.",
        publish="Pubblica in un thread",
        solved_label="Risolto",
        solved="Segnato come risolto. Grazie!",
        no_solved_tag="Questo forum non ha il tag «{tag}» per segnare il post; un moderatore può aggiungerlo.",
        only_owner_solves="Solo chi ha pubblicato questo post (o un moderatore) può segnarlo come risolto.",
        edit_unreadable="Non è stato possibile leggere questa modifica, quindi non è stato salvato nulla. Premi di "
        "nuovo «Edit» nel messaggio di revisione.",
        edit_empty="La risposta era vuota, quindi non è stato salvato nulla. Premi di nuovo «Edit» nel messaggio di "
        "revisione.",
    ),
    "ja": DiscordWording(
        only_asker="これらのボタンは質問した人だけが使えます。",
        thread_name_fallback="{user} さんの質問",
        ask_command_description="ドキュメントについて質問します",
        ask_option_description="質問内容",
        ask_received="質問を受け付けました。回答はスレッドに投稿されます。",
        ask_about_command="docbotに質問",
        ask_about_empty="このメッセージには質問できるテキストがありません。",
        publish="スレッドに投稿",
        solved_label="解決済み",
        solved="解決済みにしました。ありがとうございます！",
        no_solved_tag="このフォーラムには投稿に付ける「{tag}」タグがありません。モデレーターが追加できます。",
        only_owner_solves="解決済みにできるのは投稿者（またはモデレーター）だけです。",
        edit_unreadable="この編集を読み取れなかったため、何も保存されていません。レビューメッセージの「Edit」をもう一度"
        "押してください。",
        edit_empty="回答が空だったため、何も保存されていません。レビューメッセージの「Edit」をもう一度押してください。",
    ),
    "ko": DiscordWording(
        only_asker="질문한 사람만 이 버튼을 사용할 수 있어요.",
        thread_name_fallback="{user} 님의 질문",
        ask_command_description="문서에 질문해요",
        ask_option_description="질문 내용",
        ask_received="질문을 받았어요. 답변은 스레드에 올라와요.",
        ask_about_command="docbot에게 묻기",
        ask_about_empty="이 메시지에는 질문할 텍스트가 없어요.",
        publish="스레드에 게시",
        solved_label="해결됨",
        solved="해결됨으로 표시했어요. 고마워요!",
        no_solved_tag="이 포럼에는 게시물에 붙일 “{tag}” 태그가 없어요. 운영자가 추가할 수 있어요.",
        only_owner_solves="게시한 사람(또는 운영자)만 해결됨으로 표시할 수 있어요.",
        edit_unreadable="이 수정 내용을 읽을 수 없어서 아무것도 저장하지 않았어요. 검토 메시지에서 “Edit”을 다시 "
        "눌러 주세요.",
        edit_empty="답변이 비어 있어서 아무것도 저장하지 않았어요. 검토 메시지에서 “Edit”을 다시 눌러 주세요.",
    ),
    "nl": DiscordWording(
        only_asker="Alleen wie de vraag heeft gesteld, kan deze knoppen gebruiken.",
        thread_name_fallback="Vraag van {user}",
        ask_command_description="Stel de documentatie een vraag",
        ask_option_description="Je vraag",
        ask_received="Je vraag is binnen. Het antwoord volgt in de thread.",
        ask_about_command="Vraag het docbot",
        ask_about_empty="Dat bericht heeft geen tekst om iets over te vragen.",
        publish="In een thread plaatsen",
        solved_label="Opgelost",
        solved="Gemarkeerd als opgelost. Bedankt!",
        no_solved_tag="Dit forum heeft geen tag ‘{tag}’ om het bericht mee te markeren; een moderator kan er een "
        "toevoegen.",
        only_owner_solves="Alleen wie dit heeft geplaatst (of een moderator) kan het als opgelost markeren.",
        edit_unreadable="Deze bewerking kon niet worden gelezen, dus er is niets opgeslagen. Druk nog een keer op "
        "‘Edit’ bij het reviewbericht.",
        edit_empty="Het antwoord was leeg, dus er is niets opgeslagen. Druk nog een keer op ‘Edit’ bij het "
        "reviewbericht.",
    ),
    "pl": DiscordWording(
        only_asker="Tylko osoba, która zadała pytanie, może używać tych przycisków.",
        thread_name_fallback="Pytanie od {user}",
        ask_command_description="Zadaj pytanie dokumentacji",
        ask_option_description="Twoje pytanie",
        ask_received="Mam twoje pytanie. Odpowiedź pojawi się w wątku.",
        ask_about_command="Zapytaj docbota",
        ask_about_empty="Ta wiadomość nie zawiera tekstu, o który można zapytać.",
        publish="Opublikuj w wątku",
        solved_label="Rozwiązane",
        solved="Oznaczono jako rozwiązane. Dzięki!",
        no_solved_tag="To forum nie ma tagu „{tag}” do oznaczenia posta; moderator może go dodać.",
        only_owner_solves="Tylko autor tego posta (lub moderator) może oznaczyć go jako rozwiązany.",
        edit_unreadable="Nie udało się odczytać tej zmiany, więc nic nie zapisano. Naciśnij ponownie „Edit” w "
        "wiadomości do przeglądu.",
        edit_empty="Odpowiedź była pusta, więc nic nie zapisano. Naciśnij ponownie „Edit” w wiadomości do przeglądu.",
    ),
}

# Traditional Chinese (Taiwan, Hong Kong): the Simplified wording above in Traditional characters and Taiwan's words,
# made by OpenCC once at import, so there is no second copy to keep in step
_WORDING[TRADITIONAL_CHINESE] = chinese.traditional(_WORDING["zh"])

LANGUAGES: tuple[str, ...] = tuple(_WORDING)
ENGLISH = _WORDING["en"]


def language_of(locale: str | None) -> str:
    """The language whose wording a language code or Discord locale gets ("pt-BR" → "pt"), "en" when none."""
    base = base_language(locale)
    return base if base in _WORDING else "en"


def wording(locale: str | None) -> DiscordWording:
    """The Discord wording for a language code ("ja", a reply's) or a Discord locale ("zh-TW"), English when unknown."""
    return _WORDING[language_of(locale)]


def texts_for(language: str | None) -> Texts:
    """The shared texts in `language`, English when unknown."""
    return texts(language or "en")
