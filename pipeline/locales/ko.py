"""Korean (polite 해요체). Words are spaced, but particles and verb endings attach to them ("리모컨을", "연결하나요"):
`stem` cuts a known particle or 하다/되다 ending off a word, so the lexicon's words and a thread's topic are compared
without them; a particle that depends on the sound before it (을/를, 은/는, 이/가, 과/와, 으로/로) is cut only where it
fits, so "와이파이" and "마을" stay whole."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts, words

NAME = "Korean"  # in English

TEXTS = Texts(
    answer_lead_in="문서에 나와 있는 내용이에요:",
    team_answer_lead_in="이전에 팀이 답변한 내용이에요:",
    no_coverage="문서에서 이 내용을 다루지 않는 것 같아요.",
    closest_sections="가장 관련 있어 보이는 섹션이에요:",
    offline_note="언어 모델을 사용할 수 없어서 언어 모델 없이 답변했어요.",
    retry_label="다시 시도",
    keyword_only_note=(
        "키워드 검색으로만 찾았어요. 의미 기반 색인을 사용할 수 없어서 "
        "결과가 덜 정확할 수 있어요."
    ),
    busy="지금은 다른 질문에 답하는 중이에요. 1분 뒤에 다시 시도해 주세요.",
    stopped="요청하신 대로 멈췄어요. 언제든 다시 물어봐 주세요.",
    failure="답변하는 중에 문제가 생겼어요. 다시 시도해 주세요. 계속 문제가 생기면 담당자에게 문의해 주세요.",
    timeout="답변이 너무 오래 걸렸어요. 잠시 후 다시 시도해 주세요.",
    refusal={
        "out_of_scope": "문서에서 다루는 범위를 벗어난 내용이라 답변할 수 없어요.",
        "capability": "문서에 관한 질문에만 답할 수 있어요. 이 요청은 도와드릴 수 없어요.",
    },
    clarify={
        "vague": "조금 더 자세히 알려 주시겠어요? 무엇을 하려고 하시는지, 어떤 기능이나 제품에 관한 것인지 "
        "알려 주세요.",
        "ambiguous": "관련 있어 보이는 섹션을 여러 개 찾았어요. 어느 것을 말씀하시는 건가요?",
        "unverified": "문서로 뒷받침되는 답변을 만들지 못했어요. 질문을 다르게 표현해 주시겠어요?",
        "no_coverage": "문서에서 이 내용을 찾지 못했어요. 다음 주제 중 하나를 말씀하시는 건가요?",
        "rephrase": "네, 다른 말로 다시 질문해 주세요.",
        "generic": "질문을 좀 더 구체적으로 말씀해 주시겠어요?",
        "thanked": "도움이 되었다니 다행이에요. 다른 궁금한 점이 있으면 여기서 물어보세요.",
    },
    rephrase_label="질문 다시 하기",
    rate_limited="질문이 너무 빨라서 답변이 따라가지 못하고 있어요. 잠시 기다린 후 다시 시도해 주세요.",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "오늘의 답변 한도를 모두 사용했어요. 내일 다시 시도하거나 담당자에게 문의해 주세요."
    ),
    channel_not_allowed="이 채널에서는 답변하도록 설정되어 있지 않아요.",
    invite_needed="이 채널의 멤버가 아니라서 여기서는 답변할 수 없어요. `{command} @{bot}` 명령으로 초대한 뒤 "
    "다시 질문해 주세요.",
    empty_question="멘션 뒤에 질문을 입력해 주세요.",
    question_too_long="질문이 너무 길어요. {limit}자 이내로 줄여 주세요.",
    unreadable_input="이 메시지를 읽을 수 없어요. 질문을 일반 텍스트로 보내 주세요.",
    button_used="이미 사용된 선택지예요.",
    button_other_thread="이 버튼은 다른 대화에 속해 있어요.",
    button_expired="이 선택지는 만료되었어요. 다시 질문해 주세요.",
    feedback_helpful="도움이 됐어요",
    feedback_not_helpful="도움이 안 됐어요",
    ask_human="담당자에게 묻기",
    human_handoff="팀 담당자에게 이 스레드를 확인해 달라고 요청했어요.",
    feedback_thanks="의견 주셔서 감사합니다!",
    sources_heading="출처",
    user_asked="{user} 님의 질문:",
    you_chose="선택한 항목: {label}",
)

_ASKS_WHAT = "뭐|뭔|무엇|무슨|어떻게|어떤|왜|언제|어디|누가|누구|몇|얼마|어느"

LEXICON = Lexicon(
    troubleshooting="문제 해결 작동하지 않음",
    # a question without a question word: "와이파이 되나요?", "블루투스 있어요?"
    yes_no=rf"^(?=.*[\uac00-\ud7af])(?!.*(?:{_ASKS_WHAT})).*(?:[?？]|나요|까요|니까)\s*$",
    presence=r"있나요|있어요|있습니까|있니|있을까요|있는지|포함|지원|호환",
    how_to=r"어떻게|방법|단계",
    # the question word is where the sentence needs it, not first: it counts anywhere, as in Chinese
    how_many=r"몇\s*개",
    other=r"다른\s*(?:방법|원인|이유|해결)|또\s*(?:뭐|무엇|다른)|그\s*외에",
    amount=r"얼마나|몇",
    question_words=("어떻게", "무엇", "뭐", "왜", "언제", "어디", "누가", "누구", "몇", "얼마", "어느", "무슨"),
    object_dropped_after=("어떻게",),
    stopwords=words(
        """어떻게 어떤 무엇 뭐 뭔가 뭐가 무슨 왜 언제 어디 어디서 누가 누구 몇 얼마 얼마나 어느 이 그 저 제
        저는 제가 나 내 내가 우리 좀 더 잘 안 못 수 것 거 건가요 인가요 있나요 있어요 있습니까 있는 있을까요
        있다 없나요 없어요 있어 없어 하나요 해요 합니다 합니까 할 하는 하면 하려면 하고 했는데 하세요 되나요
        돼요 되요 됩니다 되는 안돼요 작동 작동해요 작동하나요 사용 사용법 방법 도움 도와주세요 알려주세요 알려
        주세요 부탁 감사합니다 고맙습니다 안녕하세요 문제 그리고 또 또는 그런데 근데 아니면 그냥 정말 너무 혹시
        지금 다시 입니다 이에요 예요 인데 가능 가능한가요 궁금합니다 뭐예요 뭐에요 뭐죠 뭔가요 뭐야 왜요 개"""
    ),
    thanks=("감사합니다", "고맙습니다", "고마워요", "고마워", "감사"),
    alternatives=("아니면", "또는"),
    deictics=("그거", "그것", "그건", "그걸", "그게", "이거", "이것", "이건", "이걸", "이게", "저거", "저것"),
    determiners=words("그 이 저 제 내"),
    topic_position="start",
    capability=(
        ("code", r"(프로그램|스크립트|코드|함수)\S{0,3}\s?(좀\s?)?"
                 r"(짜\s?줘|짜\s?주세요|작성해|써\s?줘|써\s?주세요)"),
        ("injection", r"(지시|명령|규칙|프롬프트|지침).{0,15}(무시|잊어)"),
        ("prompt_leak", r"(시스템\s?프롬프트|프롬프트|숨겨진\s?지시|너의\s?지시|당신의\s?지시)"
                        r".{0,20}(보여|알려|출력|공개|반복)"),
        ("roleplay", r"(인\s?척|척\s?해|역할극|역할을\s?해|롤플레이|지금부터\s?(너|당신)는"
                     r"|이제부터\s?(너|당신)는)"),
    ),
)

# particles and endings, longest first: (ending, the sound it follows, the syllables at least left before it). The
# sound: "c" a final consonant ("리모컨을"), "v" a vowel ("메뉴를"), "vl" a vowel or ㄹ ("파일로"), "" either. Left
# out: 도 ("해상도"), and a single-syllable word before 이/가/과/와/로 ("추가", "길이", "프로" are words).
_ENDINGS: tuple[tuple[str, str, int], ...] = (
    ("하려면", "", 2), ("하나요", "", 2), ("했는데", "", 2), ("합니다", "", 2), ("합니까", "", 2),
    ("하세요", "", 2), ("되나요", "", 2), ("됩니다", "", 2), ("에서는", "", 1), ("으로는", "c", 1),
    ("는요", "v", 1), ("은요", "c", 1),  # "아이패드는요?": "what about the iPad?"
    ("해요", "", 2), ("하는", "", 2), ("하면", "", 2), ("하고", "", 2), ("해야", "", 2), ("돼요", "", 2),
    ("되는", "", 2), ("에서", "", 1), ("에게", "", 1), ("으로", "c", 1), ("까지", "", 1), ("부터", "", 1),
    ("보다", "", 1), ("처럼", "", 1), ("이랑", "c", 1), ("에는", "", 1), ("로는", "vl", 2),
    ("을", "c", 1), ("를", "v", 1), ("은", "c", 1), ("는", "v", 1), ("이", "c", 2), ("가", "v", 2),
    ("과", "c", 2), ("와", "v", 2), ("로", "vl", 2), ("에", "", 1), ("만", "", 2), ("의", "", 2),
    ("랑", "v", 2), ("할", "", 2),
)  # fmt: skip
ENDINGS = frozenset(ending for ending, _, _ in _ENDINGS)  # alone after a Latin word they are no word: "TV에는"
_RIEUL = 8  # the final ㄹ's index in a Hangul syllable


def _follows(sound: str, syllable: str) -> bool:
    final = (ord(syllable) - 0xAC00) % 28  # 0: the syllable ends in a vowel
    return not sound or (sound == "c" and final != 0) or (sound.startswith("v") and final == 0) or (
        sound == "vl" and final == _RIEUL
    )


# a particle's two forms: after a consonant, after a vowel ("리모컨을", "마우스를")
_PARTICLE_FORMS = (("은", "는"), ("이", "가"), ("을", "를"), ("과", "와"), ("으로", "로"), ("이랑", "랑"))


# the particles that mark a noun as what a question is about, its subject or its object ("키보드는", "리모컨을")
_NOUN_PARTICLES = ("은", "는", "이", "가", "을", "를", "에", "으로", "로")


def marked_noun(word: str) -> tuple[str, str] | None:
    """`word` as its noun and the particle that marks it ("키보드는": "키보드", "는"); None for a word without one."""
    noun = stem(word)
    particle = word[len(noun) :]
    return (noun, particle) if noun != word and particle in _NOUN_PARTICLES else None


def particle_after(noun: str, particle: str) -> str:
    """`particle` in the form that follows `noun`'s last sound ("은" after "마우스" is "는"); as it is after a word
    that does not end in Hangul ("iPad는")."""
    last = noun[-1:]
    if not ("\uac00" <= last <= "\ud7a3"):
        return particle
    final = (ord(last) - 0xAC00) % 28
    for after_consonant, after_vowel in _PARTICLE_FORMS:
        if particle in (after_consonant, after_vowel):
            vowel = final == 0 or (after_vowel == "로" and final == _RIEUL)  # "로" follows ㄹ too
            return after_vowel if vowel else after_consonant
    return particle


def stem(word: str) -> str:
    """`word` without the particle or 하다/되다 ending attached to it ("리모컨을" -> "리모컨", "연결하나요" -> "연결"),
    or as it is when none fits ("와이파이", "추가")."""
    for ending, sound, least in _ENDINGS:
        rest = word[: -len(ending)]
        if word.endswith(ending) and len(rest) >= least and all("\uac00" <= ch <= "\ud7a3" for ch in rest) and (
            _follows(sound, rest[-1])
        ):
            return rest
    return word


# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say="문서에는 이 내용이 나와 있지 않아요: “{question}”",
    closest_they_come="가장 가까운 내용은 다음과 같아요:",
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated="{date} 업데이트",
    answered_by="{person} 님이 {date}에 {channel}에서 답변",
)
