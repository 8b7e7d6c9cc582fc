"""Who is who for team answers: configured maintainers (may approve) and experts (their replies are drafted),
as `platform:user:ID` or `platform:group:ID` (a Slack user group, a Discord role); `platform:ID` is a user."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Person:
    """Someone acting on a platform, with the groups (Slack user groups, Discord roles) the adapter found them in."""

    platform: str
    user_id: str
    name: str = ""
    groups: frozenset[str] = field(default_factory=frozenset)

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.user_id}"


@dataclass(frozen=True, slots=True)
class People:
    """A configured set of users and groups per platform."""

    users: frozenset[tuple[str, str]] = frozenset()
    groups: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> People:
        users: set[tuple[str, str]] = set()
        groups: set[tuple[str, str]] = set()
        for entry in entries:
            parts = entry.split(":")
            if len(parts) == 2:
                users.add((parts[0], parts[1]))
            elif len(parts) == 3 and parts[1] == "user":
                users.add((parts[0], parts[2]))
            elif len(parts) == 3 and parts[1] == "group":
                groups.add((parts[0], parts[2]))
            else:
                raise ValueError(f"not a person: {entry!r} (platform:user:ID or platform:group:ID)")
        return cls(frozenset(users), frozenset(groups))

    def __bool__(self) -> bool:
        return bool(self.users or self.groups)

    def includes(self, person: Person) -> bool:
        if (person.platform, person.user_id) in self.users:
            return True
        return any((person.platform, group) in self.groups for group in person.groups)

    def group_ids(self, platform: str) -> frozenset[str]:
        """The groups to look a person up in on `platform` (Slack: usergroups.users.list per group)."""
        return frozenset(group for where, group in self.groups if where == platform)
