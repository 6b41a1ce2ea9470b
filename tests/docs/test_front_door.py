"""What the documentation's front door claims is true: the speed figures on the home page and
the comparison are those `make bench` printed (docs/benchmarks/throughput/peers.txt); every
Coach parameter path of the Stable-Baselines3 mapping exists on a shipped preset; the
version shown is the package's, and the citation file says the same."""

from __future__ import annotations

import re
from configparser import ConfigParser

import pytest
import yaml

import coach
from coach.parameters import get_parameter
from coach.presets import list_presets, load_preset
from tests.docs.blocks import DOCS, ROOT, blocks

PEERS = DOCS / "benchmarks" / "throughput" / "peers.txt"


def _measured() -> dict[tuple[str, str], tuple[float, float, float]]:
    """``peers.txt``'s table: (preset, timing) -> (Coach s, SB3 s, ratio)."""
    rows = re.findall(
        r"^(\w+)\s+(whole process|training)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+$",
        PEERS.read_text(),
        flags=re.MULTILINE,
    )
    return {(p, t): (float(c), float(s), float(r)) for p, t, c, s, r in rows}


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_the_comparison_quotes_every_figure_of_the_peer_benchmark() -> None:
    measured = _measured()
    assert len(measured) == 8
    text = (DOCS / "comparison.md").read_text()
    for (preset, timing), (mine, theirs, ratio) in measured.items():
        row = f"| {preset} | {timing} | {mine:.2f} s | {theirs:.2f} s | {ratio:.2f} |"
        assert row in text, row
    assert "python -m benchmarks.peers --repeats 1" in PEERS.read_text()  # "one repeat"


def test_the_home_pages_figures_are_the_whole_process_times() -> None:
    measured = _measured()
    rows = [
        _cells(line)
        for line in (DOCS / "index.md").read_text().splitlines()
        if line.startswith("| ") and " s | " in line
    ]
    assert len(rows) == 4
    for preset_and_budget, mine, theirs, ratio in rows:
        preset = preset_and_budget.split(",")[0]
        coach_s, sb3_s, measured_ratio = measured[(preset, "whole process")]
        assert (mine, theirs, ratio) == (
            f"{coach_s:.2f} s",
            f"{sb3_s:.2f} s",
            f"{measured_ratio:.2f}",
        )


SAMPLE_NETWORKS = ("main", "actor", "critic")
"""What ``<network>`` stands for in the mapping's paths."""


def _mapped_paths() -> list[str]:
    """Every Coach parameter path named in the mapping's tables (``agent.``, ``schedule.``,
    ``environment.``), without a value given after a colon."""
    text = (DOCS / "coming-from-sb3.md").read_text()
    paths = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| SB3"):
            continue
        coach_cell = _cells(line)[1]
        for span in re.findall(r"`([^`]+)`", coach_cell):
            path = span.split(":")[0].split(" = ")[0].strip()
            if re.fullmatch(r"(agent|schedule|environment)\.[\w.<>]+", path):
                paths.append(path)
    return sorted(set(paths))


@pytest.fixture(scope="module")
def shipped_roots() -> list[dict[str, object]]:
    """The parameter trees of every shipped preset of one agent alone in its environment."""
    roots = []
    for name in list_presets():
        tree = load_preset(name).graph_manager.parameters()
        if tree.get("agent") is not None:
            roots.append(tree)
    return roots


def test_every_coach_path_of_the_mapping_exists(shipped_roots: list[dict[str, object]]) -> None:
    paths = _mapped_paths()
    assert len(paths) >= 30
    missing = []
    for path in paths:
        candidates = [path.replace("<network>", n) for n in SAMPLE_NETWORKS]
        found = False
        for roots in shipped_roots:
            for candidate in candidates:
                try:
                    get_parameter(roots, candidate)  # type: ignore[arg-type]
                except coach.CoachError:
                    continue
                found = True
                break
            if found:
                break
        if not found:
            missing.append(path)
    assert missing == [], f"no shipped preset has {missing}"


def test_the_translated_zoo_entry_names_every_key_of_the_entry() -> None:
    zoo, preset, *_ = (b.text for b in blocks(DOCS / "coming-from-sb3.md") if b.language == "yaml")
    entry = yaml.safe_load(zoo)["CartPole-v1"]
    parameters = yaml.safe_load(preset)["parameters"]
    assert parameters["schedule.heatup_steps"] == f"EnvironmentSteps({entry['learning_starts']})"
    total = int(entry["n_timesteps"])
    improve = f"EnvironmentSteps({total - entry['learning_starts']})"
    assert parameters["schedule.improve_steps"] == improve
    assert parameters["agent.network_wrappers.main.learning_rate"] == entry["learning_rate"]
    assert parameters["agent.algorithm.batch_size"] == entry["batch_size"]
    assert parameters["agent.memory.max_size"] == entry["buffer_size"]
    assert parameters["agent.algorithm.discount"] == entry["gamma"]
    assert parameters["agent.algorithm.num_consecutive_playing_steps"] == (
        f"EnvironmentSteps({entry['train_freq']})"
    )
    assert parameters["agent.algorithm.num_consecutive_training_steps"] == entry["gradient_steps"]
    sync = parameters["agent.algorithm.num_steps_between_copying_online_weights_to_target"]
    assert sync == f"EnvironmentSteps({entry['target_update_interval']})"
    decay = int(entry["exploration_fraction"] * total) - entry["learning_starts"]
    assert parameters["agent.exploration.epsilon_schedule"] == (
        f"LinearSchedule(1.0, {entry['exploration_final_eps']}, {decay})"
    )
    assert parameters["agent.network_wrappers.main.middleware.scheme"] == [256, 256]
    assert "net_arch=[256, 256]" in entry["policy_kwargs"]


def test_the_version_shown_is_the_packages() -> None:
    config = ConfigParser()
    config.read(ROOT / "setup.cfg")
    version = config["metadata"]["version"]
    assert coach.__version__ == version
    assert f"*Version {version} ·" in (DOCS / "index.md").read_text()
    assert f"## {version} (unreleased)" in (DOCS / "changelog.md").read_text()
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["version"] == version and citation["cff-version"] == "1.2.0"
    bibtex = next(b.text for b in blocks(DOCS / "index.md") if b.text.startswith("@software"))
    assert f"version = {{{version}}}" in bibtex
    assert citation["title"] in bibtex
