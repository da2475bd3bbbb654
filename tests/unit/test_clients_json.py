"""The JSON/JSONC reader with positions and the in-place edits under `tinycontext setup`:
other entries, comments and formatting survive byte for byte, errors carry line and column."""

from __future__ import annotations

import json

import pytest

from tinycontext.clients import jsonmerge
from tinycontext.clients.jsontext import ConfigSyntaxError, parse


@pytest.mark.parametrize("text", [
    '{"a": [1, 2.5e3, -3], "b": {"c": null, "d": true}, "e": "x\\u00e9\\n"}',
    "[]", '"s"', "0", '{"k": {}}', " \n{ }\n",
])
def test_reads_plain_json_like_the_standard_library(text: str) -> None:
    assert parse(text).plain() == json.loads(text)


def test_jsonc_comments_and_trailing_commas_only_when_allowed() -> None:
    text = '{\n  // servers\n  "a": 1, /* one */\n  "b": [2,],\n}\n'
    assert parse(text, comments=True).plain() == {"a": 1, "b": [2]}
    with pytest.raises(ConfigSyntaxError) as caught:
        parse(text)
    assert (caught.value.line, caught.value.column) == (2, 3)
    assert "comments are not allowed" in caught.value.reason


@pytest.mark.parametrize("text,line,column", [
    ('{\n  "a": 1\n  "b": 2\n}', 3, 3),  # missing comma
    ('{\n  "a": tru\n}', 2, 8),
    ('{"a": 1,}', 1, 9),  # trailing comma in plain JSON
    ('{\n  "a": "open\n}', 2, 13),  # a line break inside a string
    ("{\n", 2, 1),
    ('{"a": 1} x', 1, 10),
])
def test_malformed_text_names_line_and_column(text: str, line: int, column: int) -> None:
    with pytest.raises(ConfigSyntaxError) as caught:
        parse(text)
    assert (caught.value.line, caught.value.column) == (line, column), caught.value


def test_an_entry_is_added_last_and_everything_else_stays_byte_for_byte() -> None:
    text = ('{\n    "theme": "dark",\n    "mcpServers": {\n        "b": {"command": "b"},\n'
            '        "a": {\n            "command": "a"\n        }\n    },\n    "z": 1\n}\n')
    new = jsonmerge.set_value(text, ("mcpServers", "tinycontext"), {"command": "t"}, False)
    assert list(json.loads(new)["mcpServers"]) == ["b", "a", "tinycontext"]
    assert new.startswith(text[:text.index('        }\n    },')])  # untouched before
    assert '        "tinycontext": {\n            "command": "t"\n        }\n    },' in new
    assert jsonmerge.delete(new, ("mcpServers", "tinycontext"), False) == text


def test_values_span_their_whole_text() -> None:
    text = '{"s": "a string", "n": -12.5, "t": true, "o": {"k": [1]}}'
    root = parse(text)
    assert [text[m.value.start:m.value.end] for m in root.members] == [
        '"a string"', "-12.5", "true", '{"k": [1]}']
    new = jsonmerge.set_value('{"theme": "GitHub"}\n', ("m", "t"), 1, False)
    assert new == '{"theme": "GitHub", "m": {"t": 1}}\n'


def test_a_missing_container_is_created_inside_the_root() -> None:
    text = '{\n  "a": 1\n}\n'
    new = jsonmerge.set_value(text, ("servers", "tinycontext"), {"type": "stdio"}, False)
    assert json.loads(new) == {"a": 1, "servers": {"tinycontext": {"type": "stdio"}}}
    assert jsonmerge.delete(new, ("servers", "tinycontext"), False, prune=1) == text


def test_empty_and_compact_documents() -> None:
    assert json.loads(jsonmerge.set_value("", ("s", "t"), {"x": 1}, False)) == {
        "s": {"t": {"x": 1}}}
    new = jsonmerge.set_value("{}", ("s", "t"), 1, False)
    assert json.loads(new) == {"s": {"t": 1}}
    compact = '{"s": {"a": 1}}'
    new = jsonmerge.set_value(compact, ("s", "t"), [1, 2], False)
    assert new == '{"s": {"a": 1, "t": [1, 2]}}'
    assert jsonmerge.delete(new, ("s", "t"), False) == compact


def test_jsonc_comments_survive_an_add_and_a_remove() -> None:
    text = ('// Zed settings\n{\n  "theme": "One Dark", // the look\n  "context_servers": {\n'
            '    "other": { "command": "o" }, // keep me\n  },\n}\n')
    new = jsonmerge.set_value(text, ("context_servers", "tinycontext"), {"command": "t"}, True)
    assert "// keep me" in new and "// the look" in new and "// Zed settings" in new
    assert parse(new, comments=True).plain()["context_servers"] == {
        "other": {"command": "o"}, "tinycontext": {"command": "t"}}
    assert jsonmerge.delete(new, ("context_servers", "tinycontext"), True) == text
    bare = '{\n  "theme": "One Dark", // the look\n}\n'
    added = jsonmerge.set_value(bare, ("context_servers", "t"), 1, True)
    assert added == ('{\n  "theme": "One Dark", // the look\n  "context_servers": {\n'
                     '    "t": 1\n  },\n}\n')
    assert jsonmerge.delete(added, ("context_servers", "t"), True, prune=1) == bare


def test_replacing_an_entry_keeps_its_neighbours() -> None:
    text = '{\n  "s": {\n    "a": 1,\n    "t": {"old": true},\n    "z": 2\n  }\n}\n'
    new = jsonmerge.set_value(text, ("s", "t"), {"new": True}, False)
    assert list(json.loads(new)["s"].items()) == [("a", 1), ("t", {"new": True}), ("z", 2)]
    removed = jsonmerge.delete(text, ("s", "t"), False)
    assert removed == '{\n  "s": {\n    "a": 1,\n    "z": 2\n  }\n}\n'
    first = jsonmerge.delete(text, ("s", "a"), False)
    assert first == '{\n  "s": {\n    "t": {"old": true},\n    "z": 2\n  }\n}\n'


def test_tabs_are_kept_as_the_indentation() -> None:
    text = '{\n\t"mcpServers": {\n\t\t"a": {}\n\t}\n}\n'
    new = jsonmerge.set_value(text, ("mcpServers", "t"), {"k": 1}, False)
    assert '\n\t\t"t": {\n\t\t\t"k": 1\n\t\t}\n\t}' in new


def test_wrong_shapes_are_refused_with_their_position() -> None:
    with pytest.raises(jsonmerge.ConfigShapeError) as caught:
        jsonmerge.set_value('{\n  "mcpServers": []\n}', ("mcpServers", "t"), {}, False)
    assert (caught.value.line, caught.value.column) == (2, 17)
    with pytest.raises(jsonmerge.ConfigShapeError):
        jsonmerge.lookup("[1]", ("mcpServers", "t"), False)


def test_user_keys_of_an_existing_entry_survive_a_transport_change() -> None:
    old = {"command": "/old/tinycontext", "args": ["mcp"], "env": {"X": "1"}, "timeout": 5}
    assert jsonmerge.merged_entry(old, {"url": "http://h/mcp"}) == {
        "env": {"X": "1"}, "timeout": 5, "url": "http://h/mcp"}
    assert jsonmerge.merged_entry(None, {"command": "c"}) == {"command": "c"}
