"""Large JSON made a piece at a time reads back as the same value and is the text one `json.dumps` gives."""

from __future__ import annotations

import json

import pytest

from storage.json_pieces import dumps_dict, dumps_list

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("size", [0, 1, 3, 2_000, 4_001])
def test_a_list_in_pieces_is_the_list(size: int) -> None:
    items = [f"chunk-{i}" if i % 3 else {"n": i, "é": [i, None]} for i in range(size)]
    text = dumps_list(items, piece=7 if size < 100 else 1_000)
    assert json.loads(text) == items
    assert text == json.dumps(items)


@pytest.mark.parametrize("size", [0, 1, 9, 5_000])
def test_a_dict_in_pieces_is_the_dict(size: int) -> None:
    mapping = {f"tok{i}ü": i for i in range(size)}
    text = dumps_dict(mapping, piece=4 if size < 100 else 999, ensure_ascii=False)
    assert json.loads(text) == mapping
    assert text == json.dumps(mapping, ensure_ascii=False)
    assert list(json.loads(text)) == list(mapping)  # order kept: token ids follow insertion
