"""Requests docbot does not handle are acknowledged and dropped, not answered 404.

Bolt answers a request no listener matches with 404 ("unhandled request"). To Slack that is a failed delivery: events
are retried and count towards disabling the subscription, and a person pressing another app's leftover button, a
shortcut or a dialog sees an error. These listeners, registered after docbot's own, match everything else and
acknowledge it (bolt acknowledges events by itself; the others call `ack()`), so it is ignored without error.
"""

from __future__ import annotations

import re

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck

ANYTHING = re.compile(".*", re.DOTALL)


async def _acknowledge(ack: AsyncAck) -> None:
    await ack()


async def _nothing() -> None:
    return None


def acknowledge_the_rest(bolt: AsyncApp) -> None:
    """Register last: bolt runs the first listener that matches, so docbot's own listeners keep precedence."""
    bolt.event(ANYTHING)(_nothing)
    bolt.action(ANYTHING)(_acknowledge)  # block_actions, attachments, dialog submit/cancel, workflow step edit
    bolt.command(ANYTHING)(_acknowledge)
    bolt.view(ANYTHING)(_acknowledge)  # view_submission
    bolt.view_closed(ANYTHING)(_acknowledge)
    bolt.shortcut(ANYTHING)(_acknowledge)  # global and message shortcuts
    bolt.options(ANYTHING)(_acknowledge)  # block_suggestion, dialog_suggestion
