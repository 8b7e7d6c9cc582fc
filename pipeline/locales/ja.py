"""Japanese (polite です/ます). Written without spaces, like Chinese: the lexicon is read as in `zh`, by stop phrases
and question words; a topic is a run of kanji or katakana (hiragana is grammar)."""

import dataclasses

from pipeline.locales.base import Lexicon, Texts

NAME = "Japanese"  # in English

TEXTS = Texts(
    answer_lead_in="ドキュメントには次のように書かれています：",
    team_answer_lead_in="以前にチームが回答した内容です：",
    no_coverage="ドキュメントにはこの内容が記載されていないようです。",
    closest_sections="最も近いと思われるセクション：",
    offline_note="言語モデルが利用できなかったため、言語モデルを使わずに回答しました。",
    retry_label="再試行",
    keyword_only_note=(
        "キーワード検索のみで見つかりました。セマンティックインデックスが利用できなかったため、"
        "結果の精度が低い可能性があります。"
    ),
    busy="現在ほかの質問に対応中です。1分ほどしてからもう一度お試しください。",
    stopped="ご依頼どおり停止しました。いつでもまた質問してください。",
    failure="回答中に問題が発生しました。もう一度お試しください。問題が続く場合は、担当者にお問い合わせください。",
    timeout="回答に時間がかかりすぎました。しばらくしてからもう一度お試しください。",
    refusal={
        "out_of_scope": "ドキュメントの対象範囲外のため、お答えできません。",
        "capability": "ドキュメントに関するご質問にのみお答えできます。このご依頼には対応できません。",
    },
    clarify={
        "vague": "もう少し詳しく教えていただけますか？何をしようとしていて、どの機能や製品についてのご質問ですか？",
        "ambiguous": "該当しそうなセクションがいくつか見つかりました。どれのことですか？",
        "unverified": "ドキュメントに基づいた回答を作成できませんでした。質問を言い換えていただけますか？",
        "no_coverage": "ドキュメントに該当する内容が見つかりませんでした。次のトピックのいずれかのことですか？",
        "rephrase": "承知しました。別の言葉でもう一度質問してください。",
        "generic": "質問をもう少し具体的にしていただけますか？",
        "thanked": "お役に立ててよかったです。ほかにも何かあれば、ここで聞いてください。",
    },
    rephrase_label="質問を言い換える",
    rate_limited="質問のペースが速く、回答が追いつきません。少し待ってからもう一度お試しください。",
    token_budget_spent=(  # noqa: S106 - a message, not a secret
        "本日の回答の上限に達しました。明日もう一度お試しいただくか、担当者にお問い合わせください。"
    ),
    channel_not_allowed="このチャンネルでは回答するように設定されていません。",
    invite_needed="このチャンネルのメンバーではないため、ここでは回答できません。`{command} @{bot}` で招待してから、"
    "もう一度質問してください。",
    empty_question="メンションの後に質問を入力してください。",
    question_too_long="質問が長すぎます。{limit} 文字以内にしてください。",
    unreadable_input="このメッセージを読み取れませんでした。質問をプレーンテキストで送信してください。",
    button_used="この選択肢はすでに使用されています。",
    button_other_thread="このボタンは別の会話のものです。",
    button_expired="この選択肢は有効期限が切れています。もう一度質問してください。",
    feedback_helpful="役に立った",
    feedback_not_helpful="役に立たなかった",
    ask_human="担当者に聞く",
    human_handoff="チームの担当者にこのスレッドの確認を依頼しました。",
    feedback_thanks="フィードバックありがとうございます！",
    sources_heading="出典",
    user_asked="{user} さんの質問：",
    you_chose="選択した項目：{label}",
)

# question words: "何キロですか" asks what, "ありますか" only whether
_ASKS_WHAT = "何|なに|なん|どう|どこ|どちら|どっち|なぜ|いつ|どれ|どの|どんな|いくつ|いくら|誰|だれ"

LEXICON = Lexicon(
    troubleshooting="トラブルシューティング 問題 動作しない",
    # a sentence ending in か (ますか, ですか, できますか) without a question word
    yes_no=rf"^(?!.*(?:{_ASKS_WHAT})).*[ぁ-ん]か\s*[？?]?\s*$",
    presence=r"あります|ある|付いて|ついて|付属|対応|サポート",
    how_to=r"どうやって|どうすれば|方法|手順",
    how_many=r"いくつ|何個|何本|何台",
    other=r"他に|ほかに|別の(?:方法|原因|やり方|理由)",
    amount=r"どのくらい|どれくらい|どれぐらい|いくつ|何分|何時間|何個|何回|何台",
    question_words=("何", "どう", "どこ", "なぜ", "いつ", "どれ", "どの", "いくつ", "いくら", "誰", "ですか", "ますか"),
    object_dropped_after=("どうやって", "どう"),
    stopwords=frozenset(),
    thanks=("ありがとうございます", "ありがとう", "どうも"),
    alternatives=("または", "それとも"),
    deictics=("それら", "これら", "それ", "これ", "あれ"),
    topic_position="start",
    # kanji and katakana words that are no topic; kana phrases that hold a pointing word but do not point back
    stop_phrases=(
        "方法", "問題", "場合", "使用", "利用", "可能", "ヘルプ", "それとも", "それぞれ", "それから", "これから",
        "それで", "それでは", "これで",
    ),
    capability=(
        ("code", r"(プログラム|スクリプト|コード|関数)を?.{0,6}(書いて|生成して)"),
        ("injection", r"(指示|命令|ルール|プロンプト|指令).{0,15}(無視|忘れ)"),
        ("prompt_leak", r"(システムプロンプト|プロンプト|隠された指示|あなたへの指示)"
                        r".{0,20}(見せ|表示|教え|出力|繰り返|明か)"),
        ("roleplay", r"(ふりをして|ふりして|なりきって|ロールプレイ|役を演じ|今からあなたは|これからあなたは)"),
    ),
)

# the docs do not answer the question (issue 15): "the docs don't say" and the closest sections
TEXTS = dataclasses.replace(
    TEXTS,
    docs_dont_say="ドキュメントにはこの点についての記載がありません：「{question}」",
    closest_they_come="最も近い内容は次のとおりです：",
)

# citations (issue 31): how old a source is, and who gave an answer the team approved
TEXTS = dataclasses.replace(
    TEXTS,
    source_updated="{date} 更新",
    answered_by="{person} さんが {date} に {channel} で回答",
)
