"""What the generators of docs/_ext write, without building the site: an agent page's network
defaults read as layer sizes, heads and learning rates (not ``NetworkParameters(...)``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from coach import DQNAgentParameters, SACAgentParameters
from coach.networks import MiddlewareParameters, RecurrentParameters
from tests.docs.blocks import DOCS


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table's row."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


@pytest.fixture(scope="module")
def ext() -> Iterator[dict[str, ModuleType]]:
    """The generator modules, imported as the Sphinx build imports them (from docs/_ext)."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import agent_pages
        import catalogue
        import network_tables

        yield {"agent_pages": agent_pages, "catalogue": catalogue, "network_tables": network_tables}
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def test_the_networks_table_shows_layer_sizes_heads_and_learning_rates(
    ext: dict[str, ModuleType],
) -> None:
    text = ext["network_tables"].networks_table(SACAgentParameters().network_wrappers)
    header, _, *rows = (_cells(line) for line in text.splitlines())
    assert header == ["field", "`actor`", "`critic_1`", "`critic_2`"]
    by_field = {row[0]: row[1:] for row in rows}
    assert by_field["`middleware`"][0] == "layers 256, 256 (relu)"
    assert by_field["`heads`"][0].startswith("GaussianPolicy")
    assert by_field["`learning_rate`"][0] == "`0.0003`"
    assert by_field["`create_target_network`"] == ["no", "yes", "yes"]
    assert "`action`: flattened" in by_field["`input_embedders`"][1]
    assert "NetworkParameters(" not in text


def test_a_recurrent_middleware_and_a_changed_head_say_so(ext: dict[str, ModuleType]) -> None:
    tables = ext["network_tables"]
    recurrent = MiddlewareParameters(scheme=[32], recurrent=RecurrentParameters(size=48))
    assert tables.middleware(recurrent) == "LSTM 48, then layers 32 (relu)"
    (head,) = DQNAgentParameters().network_wrappers["main"].heads
    head.dueling = True
    assert tables.head(head) == "Q (dueling=True)"


def test_an_agent_page_points_its_networks_to_their_table(ext: dict[str, ModuleType]) -> None:
    catalogue = ext["catalogue"].Catalogue.load(DOCS / "benchmarks")
    page = ext["agent_pages"].agent_page(DQNAgentParameters, catalogue)
    assert "`network_wrappers` · default `main`: see [Networks](#networks) below" in page
    assert "### Networks\n" in page and "| `middleware` | layers 64, 64 (relu) |" in page
    assert "NetworkParameters(...)" not in page
