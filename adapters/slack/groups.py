"""Which of the configured Slack user groups a person is in (team answers' experts and maintainers may be given as
`slack:group:S…`): Slack's events carry no groups, so the worker looks them up with usergroups.users.list, one call
per group, kept for a few minutes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from adapters.slack.client import ClientFor, slack_error

log = logging.getLogger(__name__)

MEMBERS_TTL_S = 300.0  # a person added to a group counts within five minutes


class GroupDirectory:
    def __init__(self, client_for: ClientFor, groups: frozenset[str], *,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        """`groups`: the user group ids worth looking up (the configured ones); none: no call is ever made."""
        self._client_for = client_for
        self._groups = groups
        self._clock = clock
        self._members: dict[tuple[str, str], tuple[float, frozenset[str]]] = {}

    async def groups_of(self, team_id: str, user_id: str) -> tuple[str, ...]:
        """The configured groups `user_id` is in; a group that cannot be read now counts as not containing them."""
        found = []
        for group in sorted(self._groups):
            if user_id in await self._members_of(team_id, group):
                found.append(group)
        return tuple(found)

    async def _members_of(self, team_id: str, group: str) -> frozenset[str]:
        key = (team_id, group)
        cached = self._members.get(key)
        if cached is not None and self._clock() - cached[0] < MEMBERS_TTL_S:
            return cached[1]
        try:
            client = await self._client_for(team_id)
            response = await client.usergroups_users_list(usergroup=group)
        except Exception as exc:  # not kept: the next event asks again
            log.warning("usergroups.users.list failed", extra={"error": slack_error(exc), "team": team_id})
            return cached[1] if cached is not None else frozenset()
        members = frozenset(str(user) for user in response.get("users") or ())
        self._members[key] = (self._clock(), members)
        return members
