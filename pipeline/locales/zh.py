"""Chinese (simplified)."""

import dataclasses

from pipeline.locales import chinese
from pipeline.locales.base import Lexicon, Texts

NAME = "Simplified Chinese"  # in English: what a model is told to write, beside `zh_hant`'s "Traditional Chinese"

TEXTS = Texts(
    answer_lead_in="文档中的相关说明如下：",
    team_answer_lead_in="团队之前的回答如下：",
    no_coverage="文档中似乎没有涉及这个问题。",
    closest_sections="我找到的最接近的章节：",
    offline_note="本回答未使用语言模型生成（语言模型当前不可用）。",
    retry_label="重试",
    keyword_only_note="仅通过关键词搜索找到：语义索引暂时不可用，结果可能不够准确。",
    busy="我正在处理其他问题，请一分钟后再试。",
    stopped="已按你的要求停止。随时可以再问。",
    failure="回答时出了点问题。请再试一次；如果仍然出错，请联系工作人员。",
    timeout="回答耗时过长，请稍后再试。",
    refusal={
        "out_of_scope": "这超出了文档的范围，我无法回答。",
        "capability": "我只能回答与文档有关的问题，无法处理这个请求。",
    },
    clarify={
        "vague": "能再具体一点吗？你想做什么，涉及哪个功能或产品？",
        "ambiguous": "我找到了几个可能相关的章节，你指的是哪一个？",
        "unverified": "我无法给出有文档依据的回答。能换个说法再问一次吗？",
        "no_coverage": "我在文档中没有找到这个内容。你是指下面的某个主题吗？",
        "rephrase": "好的，请换一种说法重新提问。",
        "generic": "能说明一下你的问题吗？",
        "thanked": "很高兴能帮上忙。如果还有其他问题，随时在这里问。",
    },
    rephrase_label="换个说法提问",
    rate_limited="你提问的速度太快了，请稍等片刻再试。",
    token_budget_spent="今天的回答额度已用完。请明天再试，或联系工作人员。",  # noqa: S106 - a message, not a secret
    channel_not_allowed="我没有被配置为在此频道中回答。",
    invite_needed="我不是这个频道的成员，所以无法在这里回答。请用 `{command} @{bot}` 邀请我，然后再问一次。",
    empty_question="请在提及我之后输入问题。",
    question_too_long="问题太长了，请控制在 {limit} 个字符以内。",
    unreadable_input="我无法读取这条消息，请用纯文本发送问题。",
    button_used="这个选项已经被使用过了。",
    button_other_thread="这个按钮属于另一个对话。",
    button_expired="这个选项已过期，请重新提问。",
    feedback_helpful="有帮助",
    feedback_not_helpful="没有帮助",
    ask_human="联系工作人员",
    human_handoff="我已请团队成员查看此对话。",
    feedback_thanks="感谢你的反馈！",
    sources_heading="来源",
    user_asked="{user} 问：",
    you_chose="你的选择：{label}",
)

LEXICON = Lexicon(
    troubleshooting="故障排除 问题 无法使用",
    yes_no=r"吗\s*[？?]?\s*$|是否|能不能|有没有|可不可以|支不支持|会不会",
    presence=r"有|附带|带|支持|兼容",
    how_to=r"怎么|怎样|如何|步骤",
    how_many=r"几个|多少个",
    other=r"还有(?:什么|别的|其他|其它)|其他(?:办法|方法|原因|可能)|别的(?:办法|方法|原因|可能)|还(?:能|可能|会)是什么",
    amount=r"多久|多长|多少|几个|几次|几分钟|几小时",
    question_words=("为什么", "怎么", "如何", "什么", "哪", "多少", "几", "谁"),
    object_dropped_after=("怎么", "如何", "怎样"),
    stopwords=frozenset(),
    thanks=("谢谢", "多谢", "谢了", "感谢", "謝謝", "多謝", "感謝"),
    alternatives=("还是", "或者"),
    deictics=("它们", "它", "这个", "那个", "这些", "那些", "这", "那"),
    topic_position="start",
    stop_phrases=(
        "为什么", "怎么样", "怎么办", "是什么", "什么", "怎么", "如何", "工作", "使用", "用法", "帮助", "帮忙", "帮我",
        "问题", "请问", "一下", "可以", "能够", "不能", "没有", "坏了", "没用", "不行", "我的", "我们", "你们", "他们",
        "用", "请", "我", "你", "他", "她", "了", "的", "吗", "呢", "吧", "啊", "是", "在", "有", "不", "能", "会",
        "要", "和", "与", "或", "就", "都", "也", "还", "又", "很", "该", "做", "个", "把", "被", "给", "让", "到",
    ),
    capability=(
        ("code", r"(写|编写)(一个|一段|个|段)?.{0,6}(程序|脚本|代码|函数)"),
        ("injection", r"(忽略|无视|忘记|忘掉).{0,20}(指令|指示|规则|提示)"),
        ("prompt_leak", r"(显示|告诉我|透露|泄露|输出|重复).{0,20}(提示词|系统提示|指令)"),
        ("roleplay", r"(扮演|假装|角色扮演|从现在起你是)"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say='文档中没有说明这一点：“{question}”',
    closest_they_come='最接近的内容是：',
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated='更新于 {date}',
    answered_by='{person} 于 {date} 在 {channel} 中回答',
)

# Traditional text (這個, 嗎) is read by the same lexicon: every word and pattern also in Traditional characters
LEXICON = chinese.lexicon_in_both_scripts(LEXICON)
