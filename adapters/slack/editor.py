"""The review editor: a modal (views.open) with the team answer's text, opened by the worker that claimed an Edit
press; its submission (`view_submission`) comes back through the inbox as an `Inbound` of kind EDIT
(`adapters.slack.inbound.edit_inbound`). Where the review message is rides in the modal's private_metadata."""

from __future__ import annotations

import json
from typing import Any

TRIGGER = "trigger_id"  # ThreadRef.extra: a press's trigger_id, for an editor the worker opens (Slack: valid 3 s)
EDITOR_CALLBACK = "docbot_edit_answer"
EDITOR_BLOCK = "answer"
EDITOR_INPUT = "text"
MAX_TITLE = 24  # a modal title's limit (Block Kit)
MAX_INPUT = 3000  # plain_text_input's max_length limit
EXPIRED_TRIGGER = frozenset({"expired_trigger_id", "invalid_trigger_id", "trigger_exchanged"})


def editor_view(title: str, text: str, *, channel: str, message_ts: str, thread_ts: str, action_id: str
                ) -> dict[str, Any]:  # fmt: skip
    """The modal: one multiline input holding the answer; submitting it approves what it holds."""
    where = json.dumps({"c": channel, "m": message_ts, "t": thread_ts, "a": action_id}, separators=(",", ":"))
    return {
        "type": "modal",
        "callback_id": EDITOR_CALLBACK,
        "title": {"type": "plain_text", "text": title[:MAX_TITLE]},
        "submit": {"type": "plain_text", "text": "Save and approve"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": where,
        "blocks": [
            {
                "type": "input",
                "block_id": EDITOR_BLOCK,
                "label": {"type": "plain_text", "text": "The answer, as it will be quoted"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": EDITOR_INPUT,
                    "multiline": True,
                    "max_length": MAX_INPUT,
                    "initial_value": text[:MAX_INPUT],
                },
            }
        ],
    }
