"""Golden trains the presets the guide ships (`tests.learning.guide`) from the guide page's
own blocks: the file a page shows is the file a case trains, by the preset's stem."""

from __future__ import annotations

from pathlib import Path

from coach.presets import list_presets, load_preset
from tests.docs.blocks import blocks
from tests.learning.golden import cases, label, resolve
from tests.learning.guide import (
    GUIDE_PAGES,
    PREFIX,
    guide_files,
    guide_folder,
    guide_presets,
)

GUIDE_AGENTS = ("CartPole_MunchausenDQN", "CartPole_SPO", "Pendulum_SmoothTD3")


def test_the_guides_presets_are_golden_cases_on_the_seeds_they_name() -> None:
    presets = guide_presets()
    assert sorted(presets) == list(GUIDE_AGENTS)
    assert not set(presets) & set(list_presets())  # a guide's name never hides a shipped one
    every = cases()
    for name, path in presets.items():
        validation = load_preset(path).validation
        assert validation is not None and validation.seeds == (0, 1, 2)
        assert [case for case in every if case[0] == path] == [(path, s) for s in (0, 1, 2)]
        assert cases([name], [1]) == [(path, 1)]


def test_a_case_trains_the_file_the_page_shows() -> None:
    shown = {
        block.text
        for page in GUIDE_PAGES
        for block in blocks(page)
        if block.text.startswith("# file: ")
    }
    folder = guide_folder()
    assert {(folder / name).read_text() for name in guide_files()} == shown
    for stem, path in guide_presets().items():
        assert Path(path).parent == folder
        assert f"# file: {stem}.py\n" in Path(path).read_text()


def test_the_guides_folder_is_one_for_every_process_that_asks() -> None:
    assert guide_folder() == guide_folder()


def test_a_guide_preset_is_named_by_its_stem_and_a_shipped_one_as_given() -> None:
    path = guide_presets()["CartPole_SPO"]
    assert resolve("CartPole_SPO") == path
    assert label(path) == "CartPole_SPO"
    # A case of a run that began before the page changed: its folder is the old page's.
    assert label(str(guide_folder().with_name(f"{PREFIX}0123") / "CartPole_SPO.py")) == (
        "CartPole_SPO"
    )
    assert resolve("CartPole_DQN") == label("CartPole_DQN") == "CartPole_DQN"
    assert resolve("my/preset.py") == label("my/preset.py") == "my/preset.py"
