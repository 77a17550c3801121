"""``strict_loads``: what every route's body decoding refuses, and what it keeps."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.server._strict_json import INT_MAX, INT_MIN, strict_loads

pytestmark = pytest.mark.fast


def refusal(body: bytes) -> str:
    with pytest.raises(json.JSONDecodeError) as caught:
        strict_loads(body)
    return caught.value.msg


def test_a_lone_surrogate_is_refused_where_it_is() -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "ok \ud800 no"}]}).encode()
    message = refusal(body)
    assert "messages[0].content" in message and "lone surrogate (\\ud800)" in message
    assert "lone surrogate (\\udc00)" in refusal(b'{"a": ["\\udc00"]}')
    assert "lone surrogate" in refusal(b'{"\\udbff": 1}')  # a key, too
    # Raw surrogate bytes (CESU-8) are not UTF-8: refused while decoding.
    assert "not UTF-8" in refusal(b'{"a": "\xed\xa0\x80"}')
    assert "not UTF-8" in refusal(b'{"a": "\xff"}')


def test_valid_text_is_kept() -> None:
    # A complete pair is one character; an escaped backslash before "ud800" is text.
    assert strict_loads(b'{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}') == {
        "a": "\U0001f600",
        "b": "\\ud800",
    }
    assert strict_loads(json.dumps({"t": "é 中 😀"}, ensure_ascii=False).encode()) == {
        "t": "é 中 😀"
    }
    assert strict_loads('{"a": 1}'.encode("utf-16")) == {"a": 1}  # detected, as json does


def test_numbers_out_of_range_are_refused() -> None:
    assert "out of range" in refusal(b'{"seed": 100000000000000000000}')
    assert "out of range" in refusal(b'{"seed": -9223372036854775809}')
    assert "out of range" in refusal(b'{"x": 1' + b"0" * 5000 + b"}")  # never parsed
    assert "out of range" in refusal(b'{"t": 1e999}')
    assert "NaN is not a JSON number" in refusal(b'{"t": NaN}')
    assert "Infinity" in refusal(b'{"t": -Infinity}')
    assert strict_loads(f"[{INT_MIN}, {INT_MAX}, 1e20, -0.5]".encode()) == [
        INT_MIN,
        INT_MAX,
        1e20,
        -0.5,
    ]


@settings(max_examples=80, deadline=None, database=None, derandomize=True)
@given(
    st.recursive(
        st.text()
        | st.integers(INT_MIN, INT_MAX)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.booleans()
        | st.none(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=12,
    )
)
def test_any_body_is_kept_or_refused_never_crashes(value: object) -> None:
    """Whatever hypothesis' text holds (surrogates included): the value back, or a
    JSONDecodeError exactly when it holds a lone surrogate."""
    body = json.dumps(value).encode()
    has_surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in json.dumps(value, ensure_ascii=False))
    if has_surrogate:
        assert "lone surrogate" in refusal(body)
    else:
        assert strict_loads(body) == value
