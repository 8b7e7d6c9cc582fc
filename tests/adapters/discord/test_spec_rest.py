"""Every REST call the Discord adapter makes (through discord.py) checked against Discord's official OpenAPI spec
(../shared/data/discord/api-spec/specs/openapi.json, OpenAPI 3.1).

The calls are the ones the real client makes while it handles gateway events parsed by discord.py itself: login and
command sync, a mention answered in a new thread (typing, thread, message with embed and buttons), a clarification
and its button pressed (accepted: the message updated; refused: a private follow-up), /ask (deferred, echoed,
answered in a thread), /ask in a refused channel, a follow-up in the thread (its history read), a direct message, and
an answer streamed by edits then finished or discarded. Each recorded call must match a path template and HTTP method
of the spec; a JSON body must fit its request schema (`$ref`s resolved; for a union, one alternative): every
top-level field a property of it, every required field present — and the whole body must validate with jsonschema.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from adapters.discord.sink import discord_thread_ref
from adapters.discord.stream import DiscordAnswerStream
from pipeline.messages import ActionOutcome, Citation, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.conftest import shared_path
from tests.fakes import discord_payloads as p
from tests.fakes.discord_rest import RecordedCall

pytestmark = pytest.mark.integration

SPEC_PARTS = ("discord", "api-spec", "specs", "openapi.json")

# Fields discord.py itself adds that the OpenAPI preview's request schema leaves out, each named with why it is fine.
LIBRARY_FIELDS: dict[tuple[str, str, str], str] = {
    ("PATCH", "/channels/{channel_id}/messages/{message_id}", "tts"):
        "discord.py's http.handle_message_parameters() puts tts (false) into every message payload, edits included; "
        "MessageEditRequestPartial has no tts (Discord ignores unknown fields on edit)",
    ("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original", "tts"):
        "the same handle_message_parameters() adds tts (false) when the interaction's first response is edited "
        "(a private answer replacing \"thinking…\"); IncomingWebhookUpdateRequestPartial has no tts",
    ("PUT", "/applications/{application_id}/commands", "nsfw"):
        "discord.py's app_commands serialise Command.nsfw (false); Discord documents nsfw on application commands "
        "(https://discord.com/developers/docs/interactions/application-commands#application-command-object, "
        "https://github.com/discord/discord-api-docs/issues/7914) but ApplicationCommandUpdateRequest omits it",
}


@cache
def _load(path: Path) -> dict[str, Any]:
    import json

    return dict(json.loads(path.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return _load(shared_path(*SPEC_PARTS))


def template_for(spec: dict[str, Any], method: str, path: str) -> str | None:
    """The spec's path template that `path` instantiates and that has `method`, e.g. /channels/{channel_id}/messages."""
    for template, item in spec["paths"].items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path) and method.lower() in item:
            return str(template)
    return None


def resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = spec
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def alternatives(spec: dict[str, Any], schema: dict[str, Any]) -> list[tuple[set[str], set[str]]]:
    """(properties, required) of each object shape the schema allows (anyOf/oneOf flattened, allOf merged)."""
    schema = resolve(spec, schema)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return [alt for option in schema[union] for alt in alternatives(spec, option)]
    if "allOf" in schema:
        properties: set[str] = set()
        required: set[str] = set()
        for part in schema["allOf"]:
            for part_properties, part_required in alternatives(spec, part):
                properties |= part_properties
                required |= part_required
        return [(properties, required)]
    return [(set(schema.get("properties", {})), set(schema.get("required", [])))]


def request_schema(spec: dict[str, Any], template: str, method: str) -> dict[str, Any] | None:
    operation = spec["paths"][template][method.lower()]
    content = (operation.get("requestBody") or {}).get("content") or {}
    json_body = content.get("application/json")
    return None if json_body is None else dict(json_body["schema"])


def problems_with(call: RecordedCall, spec: dict[str, Any]) -> list[str]:
    where = f"{call.method} {call.path}"
    template = template_for(spec, call.method, call.path)
    if template is None:
        return [f"{where}: no such path and method in the spec"]
    if call.body is None:
        return []
    schema = request_schema(spec, template, call.method)
    if schema is None:
        return [f"{where} ({template}): the spec takes no JSON body here"]
    found: list[str] = []
    bodies = call.body if isinstance(call.body, list) else [call.body]
    item_schema = resolve(spec, schema).get("items", schema) if isinstance(call.body, list) else schema
    allowed = {field for (m, t, field) in LIBRARY_FIELDS if (m, t) == (call.method, template)}
    for body in bodies:
        fits = [
            (sorted(set(body) - properties - allowed), sorted(required - set(body)))
            for properties, required in alternatives(spec, item_schema)
        ]
        if not any(not unknown and not missing for unknown, missing in fits):
            unknown, missing = min(fits, key=lambda f: len(f[0]) + len(f[1]))
            found.append(f"{where} ({template}): unknown fields {unknown}, missing required {missing}")
    locales = {alt["const"] for alt in spec["components"]["schemas"]["AvailableLocalesEnum"]["oneOf"]}
    found += [f"{where} ({template}): {key!r} is not a Discord locale" for key in localization_keys(call.body)
              if key not in locales]  # fmt: skip
    validator = jsonschema.Draft202012Validator({**schema, "components": spec["components"]})
    found += [f"{where} ({template}): {e.message[:160]} at {list(e.absolute_path)}" for e in
              validator.iter_errors(call.body)]  # fmt: skip
    return found


def localization_keys(body: Any) -> Iterator[str]:
    """The locales of every `name_localizations` / `description_localizations` in a body (commands and options): the
    spec types them as any string, but Discord refuses a key that is not one of its locales (e.g. "pt", "zh")."""
    if isinstance(body, dict):
        for key, value in body.items():
            if key.endswith("_localizations") and isinstance(value, dict):
                yield from value
            else:
                yield from localization_keys(value)
    elif isinstance(body, list):
        for item in body:
            yield from localization_keys(item)


CITATION = Citation(1, "Pairing the remote", ("Remote", "Pairing"), "https://docs.test/remote#pair", "c1", 0.9)


def answer(text: str = "Hold **Home** and **Back** for 5 seconds [1].") -> Reply:
    return Reply(
        kind=ReplyKind.ANSWER, text=text, language="en", conversation_id="conv-1", citations=(CITATION,),
        actions=(ReplyAction("helpful-1", "Helpful", ActionKind.HELPFUL),
                 ReplyAction("human-1", "Ask a human", ActionKind.HUMAN)),
    )  # fmt: skip


def clarification() -> Reply:
    return Reply(
        kind=ReplyKind.CLARIFICATION, text="Which remote do you mean?", language="en", conversation_id="conv-1",
        actions=(ReplyAction("opt-voice", "Voice remote", ActionKind.SEARCH),
                 ReplyAction("opt-basic", "Basic remote", ActionKind.SEARCH)),
    )  # fmt: skip


async def drive_every_scenario(world: DiscordWorld) -> None:
    accepted = iter([True, False])
    handler = FakeHandler(
        on_message=lambda inbound: clarification() if "doesn't work" in inbound.text else answer(),
        on_action=lambda inbound: ActionOutcome(accepted=True, chosen_label="Voice remote", reply=answer())
        if next(accepted) else ActionOutcome(accepted=False, chosen_label="", notice="Already used."),
    )  # fmt: skip
    client = await world.client(handler)
    question = await world.say(client, world.alice, f"{world.mention()} how do I pair the remote?")
    thread_id = question["id"]
    client._connection.parse_thread_create(world.rest.channels[thread_id])  # type: ignore[arg-type]
    await world.say(client, world.alice, "and the voice remote?", channel_id=thread_id, mentions_bot=False)
    vague = await world.say(client, world.bob, f"{world.mention()} it doesn't work")
    [clarifying] = world.bot_messages(vague["id"])
    voice, basic = world.custom_ids(clarifying)
    await world.press(client, clarifying["id"], voice, world.bob)
    await world.press(client, clarifying["id"], basic, world.bob)
    await world.ask(client, world.alice, "How do I reset the remote?")
    dm_id = p.snowflake()
    await world.deliver_message(client, p.message(dm_id, world.alice, "how do I pair the remote?"))
    ref = discord_thread_ref(world.guild_id, world.channel_id, thread_id, asker_id=int(world.alice["id"]))
    stream = DiscordAnswerStream(client, ref, min_interval_s=0.0)
    for text in ("Hold", "Hold the pair", "Hold the pair button."):
        await stream.update(text)
    streamed = await stream.finish()
    assert streamed is not None
    await client.sink.post(dataclasses.replace(ref, placeholder_id=streamed), answer())
    dropped = DiscordAnswerStream(client, ref, min_interval_s=0.0)
    await dropped.update("Half an answer")
    await dropped.discard()
    refusing = await world.client(handler, channel_policies=[
        {"platform": "discord", "channel_id": world.channel_id, "allowed": False}])  # fmt: skip
    await world.ask(refusing, world.alice, "How do I pair the remote?")


EXPECTED = {
    ("GET", "/users/@me"), ("GET", "/oauth2/applications/@me"), ("PUT", "/applications/{application_id}/commands"),
    ("POST", "/channels/{channel_id}/messages/{message_id}/threads"), ("POST", "/channels/{channel_id}/typing"),
    ("POST", "/channels/{channel_id}/messages"), ("GET", "/channels/{channel_id}/messages"),
    ("PATCH", "/channels/{channel_id}/messages/{message_id}"),
    ("DELETE", "/channels/{channel_id}/messages/{message_id}"),
    ("POST", "/interactions/{interaction_id}/{interaction_token}/callback"),
    ("POST", "/webhooks/{webhook_id}/{webhook_token}"),
}  # fmt: skip


async def test_every_rest_call_of_the_adapter_matches_the_spec(world: DiscordWorld, spec: dict[str, Any]) -> None:
    await drive_every_scenario(world)
    calls = [c for c in world.rest.calls if c.status < 400]
    templates = {(c.method, template_for(spec, c.method, c.path)) for c in calls}
    assert templates >= EXPECTED, f"scenarios no longer reach: {sorted(EXPECTED - templates, key=str)}"
    problems = sorted({problem for call in calls for problem in problems_with(call, spec)})
    assert not problems, "REST calls Discord would reject:\n" + "\n".join(problems)
    print(f"\nchecked {len(calls)} REST calls of {len(templates)} endpoints: {sorted(templates, key=str)}")


def test_the_check_rejects_what_discord_would(spec: dict[str, Any]) -> None:
    def call(method: str, path: str, body: Any = None) -> RecordedCall:
        return RecordedCall(method, path, {}, body, 200)

    assert problems_with(call("POST", "/channels/1/messages", {"content": "hi", "allowed_mentions": {"parse": []}}),
                         spec) == []  # fmt: skip
    assert problems_with(call("POST", "/channels/1/messages", {"contents": "hi"}), spec)  # misspelt field
    assert problems_with(call("POST", "/channels/1/messages/2/threads", {"auto_archive_duration": 60}), spec)  # no name
    assert problems_with(call("POST", "/channels/1/mesages", {"content": "hi"}), spec)  # no such path
    assert problems_with(call("PUT", "/channels/1/messages", {"content": "hi"}), spec)  # no such method
    assert problems_with(call("POST", "/interactions/1/tok/callback", {"type": 4, "data": {"content": 5}}), spec)
    assert problems_with(call("POST", "/interactions/1/tok/callback", {"type": 5}), spec) == []
    command = {"name": "ask", "description": "Ask", "description_localizations": {"pt-BR": "Pergunte"}}
    assert problems_with(call("PUT", "/applications/1/commands", [command]), spec) == []
    assert problems_with(call("PUT", "/applications/1/commands", [{**command, "description_localizations": {
        "pt": "Pergunte"}}]), spec)  # not a Discord locale  # fmt: skip
    assert problems_with(call("PUT", "/applications/1/commands", [{"name": "Ask docbot", "type": 3,
                                                                   "name_localizations": {"ja": "x" * 33}}]), spec)


def test_the_docs_message_bodies_with_components_fit_the_spec(spec: dict[str, Any]) -> None:
    """The docs' create-message examples with buttons and selects (the clarification UI's shape) pass the same check:
    the checker accepts what Discord documents."""
    import json

    root = shared_path("discord", "gateway-payloads")
    entries = json.loads((root / "index.json").read_text(encoding="utf-8"))
    bodies = [e["file"] for e in entries if e["gateway_event"] == "(REST create message body)"]
    assert len(bodies) >= 3
    for name in bodies:
        body = json.loads((root / name).read_text(encoding="utf-8"))
        assert problems_with(RecordedCall("POST", "/channels/1/messages", {}, body, 200), spec) == [], name
