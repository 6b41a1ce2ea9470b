"""What the generators of docs/_ext write, without building the site: an agent page's network
defaults read as layer sizes, heads and learning rates (not ``NetworkParameters(...)``); the
algorithms matrix has a row for every agent, with the names it is searched for, and says of
the agents what their code does (each fact below is one the code decides)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from coach import DQNAgentParameters, SACAgentParameters
from coach.networks import MiddlewareParameters, RecurrentParameters
from coach.preset_validation import PresetValidation
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
        import algorithm_matrix
        import benchmark_pages
        import catalogue
        import network_tables

        yield {
            "agent_pages": agent_pages,
            "algorithm_matrix": algorithm_matrix,
            "benchmark_pages": benchmark_pages,
            "catalogue": catalogue,
            "network_tables": network_tables,
        }
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


@pytest.fixture(scope="module")
def catalogue(ext: dict[str, ModuleType]) -> Any:
    """Every agent and preset, as the build gathers them."""
    return ext["catalogue"].Catalogue.load(DOCS / "benchmarks")


@pytest.fixture(scope="module")
def pages(ext: dict[str, ModuleType], catalogue: Any) -> dict[str, str]:
    """The agent pages and their index, by path."""
    written: dict[str, str] = ext["agent_pages"].pages(catalogue)
    return written


@pytest.fixture(scope="module")
def matrix(ext: dict[str, ModuleType], catalogue: Any) -> dict[str, Any]:
    """The matrix's rows by agent name."""
    return {
        row.params.__name__.removesuffix("AgentParameters"): row
        for row in ext["algorithm_matrix"].rows(catalogue)
    }


def test_an_agent_page_points_its_networks_to_their_table(pages: dict[str, str]) -> None:
    page = pages["agents/DQN.md"]
    assert "`network_wrappers` · default `main`: see [Networks](#networks) below" in page
    assert "### Networks\n" in page and "| `middleware` | layers 64, 64 (relu) |" in page
    assert "NetworkParameters(...)" not in page


def test_the_matrix_has_a_row_for_every_agent_with_the_names_it_is_searched_for(
    ext: dict[str, ModuleType], catalogue: Any, pages: dict[str, str]
) -> None:
    names = {params.__name__ for params in catalogue.agents}
    assert set(ext["algorithm_matrix"].ALSO_KNOWN_AS) == names  # no agent without them
    index = pages["agents/index.md"]
    section = index.split("## Algorithms matrix\n")[1].split("\n## ")[0]
    rows = [_cells(line) for line in section.splitlines() if line.startswith("| [")]
    assert len(rows) == len(names) == len(catalogue.agents) >= 27
    linked = {row[0].split("](")[1].removesuffix(".md)") for row in rows}
    assert linked == {p.removeprefix("agents/").removesuffix(".md") for p in pages} - {"index"}
    for searched in ("A2C", "C51", "QR-DQN", "Rainbow", "REINFORCE", "Double DQN", "BCQ"):
        assert any(searched in row[1] for row in rows), searched


def test_the_matrix_says_what_the_code_does(matrix: dict[str, Any]) -> None:
    assert matrix["DQN"].action_spaces == ("Discrete",)
    assert matrix["SAC"].action_spaces == ("Box",)
    assert matrix["ClippedPPO"].action_spaces == ("Discrete", "Box")  # with a Gaussian head
    assert matrix["ClippedPPO"].learns_from == "on-policy" and matrix["ClippedPPO"].recurrent
    assert matrix["DQN"].learns_from == "off-policy" and not matrix["DQN"].recurrent
    assert matrix["CQL"].learns_from == "offline (a dataset)"
    assert matrix["NEC"].rollout_workers == "no" and "dictionaries" in str(
        matrix["NEC"].why_not_workers
    )
    assert matrix["HAC"].rollout_workers == "no" and matrix["HAC"].export == "no"
    assert matrix["ActorCritic"].asynchronous == ("CartPole_A3C",)
    assert "SimpleSpread_SharedPPO" in matrix["ClippedPPO"].multi_agent
    assert matrix["R2D2"].export == "no" and "recurrent" in str(matrix["R2D2"].why_not_export)
    assert matrix["Rainbow"].export == "no"  # noisy networks draw new weights every step
    assert matrix["ClippedPPO"].export == "feed-forward networks"
    assert matrix["TD3"].export == "yes" and matrix["TD3"].rollout_workers == "yes"


def test_an_agent_page_says_what_it_works_with_and_why_not(pages: dict[str, str]) -> None:
    page = pages["agents/NEC.md"]
    section = page.split("## What it works with\n")[1].split("\n## ")[0]
    assert "- Action spaces: Discrete." in section
    assert "- Rollout workers (`-n`): no: its dictionaries" in section
    assert "- Export (`coach export`): no: " in section


def test_a_long_name_may_break_at_its_parts_but_not_in_code(ext: dict[str, ModuleType]) -> None:
    breakable = ext["catalogue"].breakable
    assert breakable("ExplorationChain_DQN") == "Exploration<wbr>Chain_<wbr>DQN"
    assert breakable("pettingzoo.classic:tictactoe_v3") == (
        "pettingzoo.<wbr>classic:<wbr>tictactoe_<wbr>v3"
    )
    assert breakable("at 0.99, `a_b` and ``coach -p Atari_DQN``") == (
        "at 0.99, `a_b` and ``coach -p Atari_DQN``"  # figures and code spans as they are
    )


def _record(seed: int, final: float, passed: bool = True) -> dict[str, Any]:
    """A recorded seed as `benchmarks.learning_curves` writes it."""
    return {
        "seed": seed,
        "reached_at": 12_000 if passed else None,
        "seconds": 30.0,
        "best": 480.0,
        "best_checkpoint": 470.0,
        "final": final,
        "total_seconds": 60.0,
        "passed": passed,
        "why": "" if passed else "never reached 195 within 50,000 env steps",
        "baselines": None,
    }


def test_a_seed_whose_final_agent_misses_fails_whatever_its_record_says(
    ext: dict[str, ModuleType],
) -> None:
    pages = ext["benchmark_pages"]
    promise = PresetValidation(min_reward=195, max_env_steps=50_000)
    seeds = [_record(0, 500.0), _record(1, 194.9), _record(2, 20.0, passed=False)]
    text = pages.seed_table({"seeds": seeds}, promise)
    verdicts = [_cells(line)[-1] for line in text.splitlines()[2:]]
    assert verdicts == [
        "pass",
        f"fail: {pages.FINAL_MISSES}",
        "fail: never reached 195 within 50,000 env steps",
    ]
    assert [pages.passed(s, promise) for s in seeds] == [True, False, False]
    # Per agent: the record is the graph's sum divided by its agents; the promise is the sum.
    pair = PresetValidation(min_reward=30, max_env_steps=50_000, per_agent=2)
    alone = PresetValidation(min_reward=30, max_env_steps=50_000)
    assert [pages.final_holds(_record(0, 19.0), v) for v in (pair, alone)] == [True, False]
    # A success rate is judged as one; a ceiling holds below it.
    rate = PresetValidation(min_success_rate=0.8, max_env_steps=50_000)
    assert [pages.final_holds(_record(0, f), rate) for f in (0.85, 0.75)] == [True, False]
    ceiling = PresetValidation(max_reward=-100, max_env_steps=50_000)
    assert [pages.final_holds(_record(0, f), ceiling) for f in (-150.0, -50.0)] == [True, False]
    # A relative promise's floor is the seed's own: its recorded verdict stands.
    relative = PresetValidation(gap_closed=0.5, max_env_steps=50_000, baselines="scripted")
    assert pages.verdict(_record(0, -1e9), relative) == "pass"
