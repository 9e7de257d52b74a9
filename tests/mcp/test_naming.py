"""Function names for MCP tools follow Gemini's rules and never depend on order."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from koroku_desktop.mcp.naming import MAX_NAME, assign_names, base_name

VALID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")


def test_server_and_tool_joined_and_sanitised() -> None:
    assert base_name("files", "read") == "files_read"
    assert base_name("my server", "get weather/forecast!") == "my_server_get_weather_forecast_"
    assert base_name("9lives", "x") == "_9lives_x"


def test_collisions_get_distinct_hashed_names_whatever_the_order() -> None:
    tools = [("a b", "c"), ("a_b", "c"), ("bash", "x")]
    names = assign_names(tools, reserved=["bash_x"])
    assert names == assign_names(list(reversed(tools)), reserved=["bash_x"])
    assert len(set(names.values())) == 3
    assert names[("a b", "c")].startswith("a_b_c_") and names[("a_b", "c")].startswith("a_b_c_")
    assert names[("bash", "x")] != "bash_x"


def test_long_names_are_cut_to_64_with_a_hash() -> None:
    names = assign_names([("s" * 40, "t" * 40), ("s" * 40, "t" * 41)])
    assert all(len(n) <= MAX_NAME for n in names.values())
    assert len(set(names.values())) == 2


@given(st.lists(st.tuples(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))))
def test_every_name_is_valid_and_unique(tools: list[tuple[str, str]]) -> None:
    names = assign_names(tools, reserved=["read_file"])
    assert all(VALID.match(n) for n in names.values())
    assert len(set(names.values())) == len(names)
    assert "read_file" not in names.values()
