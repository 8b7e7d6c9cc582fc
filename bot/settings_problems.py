"""Settings mistakes as one line each: the environment variable, what is wrong with its value, and an example.

    DOCBOT_ROLE_TIMEOUT_S: "-1" must be greater than 0, e.g. DOCBOT_ROLE_TIMEOUT_S=20

`doctor`, `run` and every other command print these lines and exit; nobody sees pydantic's error tree or a
traceback. A secret's value is never repeated.
"""

from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import AliasChoices, BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings
from pydantic_settings.exceptions import SettingsError

S = TypeVar("S", bound=BaseSettings)
SHOWN_CHARS = 40  # of a wrong value, in the message


class SettingsInvalid(Exception):
    """The configuration cannot be used; `problems` holds one line per mistake."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def read_settings(cls: type[S], overrides: dict[str, Any]) -> S:
    try:
        return cls(**overrides)
    except ValidationError as exc:
        raise SettingsInvalid(problems(cls, exc)) from None
    except SettingsError as exc:  # a source failed before validation (every JSON field parses itself, so rare)
        raise SettingsInvalid([f"cannot read the settings: {' '.join(str(exc).split())}"]) from None
    except UnicodeDecodeError as exc:  # the .env file, read as UTF-8
        raise SettingsInvalid([f".env: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
                               "save it as UTF-8"]) from None  # fmt: skip
    except OSError as exc:
        raise SettingsInvalid([f".env: cannot be read ({exc.strerror or type(exc).__name__})"]) from None


def env_name(cls: type[BaseModel], field: str) -> str:
    """The environment variable a field is read from (the SDK's standard name where there is one)."""
    info = cls.model_fields[field]
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        first = alias.choices[0]
        if isinstance(first, str):
            return first
    prefix = str(getattr(cls, "model_config", {}).get("env_prefix", ""))
    return f"{prefix}{field}".upper()


def example(cls: type[BaseModel], field: str) -> str | None:
    """A value that works: the field's documented example, else its default (when it has a useful one)."""
    info = cls.model_fields[field]
    if info.examples:
        return str(info.examples[0])
    default = info.get_default(call_default_factory=True)
    if default is None or default == "" or default == () or isinstance(default, SecretStr):
        return None
    if isinstance(default, dict):
        return None if not default else _json_example(default)
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, float):
        return _number(default)
    return str(getattr(default, "value", default))


def problems(cls: type[BaseModel], exc: ValidationError) -> list[str]:
    lines = []
    by_alias = _fields_by_alias(cls)
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        field = by_alias.get(str(loc[0]), str(loc[0])) if loc else ""
        if field not in cls.model_fields:  # a model-level check: its message names what it is about
            lines.append(" ".join(part for part in _wording(error) if part))
            continue
        lines.append(_line(cls, field, error))
    return lines


def _line(cls: type[BaseModel], field: str, error: ErrorDetails) -> str:
    name = env_name(cls, field)
    info = cls.model_fields[field]
    shown = "" if _is_secret(info) else _shown(error.get("input"))
    where, words = _wording(error)
    line = f"{name}: {' '.join(part for part in (where, shown, words) if part)}"
    sample = example(cls, field)
    return f"{line}, e.g. {name}={sample}" if sample else line


def _wording(error: ErrorDetails) -> tuple[str, str]:
    """Where inside a JSON value (`0.allowed`, or "" for the whole value) and what is wrong, in plain words."""
    kind, ctx = error["type"], error.get("ctx") or {}
    words = {
        "int_parsing": "must be a whole number",
        "int_type": "must be a whole number",
        "int_from_float": "must be a whole number",
        "float_parsing": "must be a number",
        "float_type": "must be a number",
        "bool_parsing": "must be true or false",
        "bool_type": "must be true or false",
        "greater_than": f"must be greater than {_number(ctx.get('gt'))}",
        "greater_than_equal": f"must be at least {_number(ctx.get('ge'))}",
        "less_than": f"must be less than {_number(ctx.get('lt'))}",
        "less_than_equal": f"must be at most {_number(ctx.get('le'))}",
        "literal_error": f"must be one of {ctx.get('expected')}",
        "enum": f"must be one of {ctx.get('expected')}",
        "string_type": "must be text",
        "dict_type": "must be a JSON object",
        "tuple_type": "must be a JSON list",
        "list_type": "must be a JSON list",
        "model_type": "must be a JSON object",
        "path_type": "must be a file path",
    }
    if kind in words:
        message = words[kind]
    else:
        message = str(error["msg"])
        for prefix in ("Value error, ", "Assertion failed, "):
            message = message.removeprefix(prefix)
        message = " ".join(message.split())
        message = message[:1].lower() + message[1:]
    # pydantic's loc inside the value: (0, "allowed") for item 0's "allowed"; ("writer", "[key]") for a bad key
    nested = [str(part) for part in error["loc"][1:] if part != "[key]"]
    return (f"{'.'.join(nested)}:" if nested else "", message)


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _shown(value: object) -> str:
    """The wrong value as typed, shortened, with any password in a URL masked."""
    if not isinstance(value, str | int | float):
        return ""
    text = " ".join(str(value).split())
    parts = urlsplit(text)
    if parts.password:
        text = text.replace(f":{parts.password}@", ":***@", 1)
    if len(text) > SHOWN_CHARS:
        text = text[: SHOWN_CHARS - 1] + "…"
    return f'"{text}"'


def _is_secret(info: FieldInfo) -> bool:
    return "SecretStr" in repr(info.annotation)


def _fields_by_alias(cls: type[BaseModel]) -> dict[str, str]:
    found = {}
    for field, info in cls.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            found.update({choice: field for choice in alias.choices if isinstance(choice, str)})
    return found


def _json_example(value: dict[Any, Any]) -> str:
    first = next(iter(value.items()))
    key = getattr(first[0], "value", first[0])
    return f'{{"{key}": {first[1]}}}'
