"""Unit tests for coach/parameters.py: overrides without exec, type checks, flatten."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from coach import parameters
from coach.agents.dqn import DQNAgentParameters
from coach.core.step_units import EnvironmentEpisodes, EnvironmentSteps, TrainingSteps
from coach.errors import CoachError
from coach.filters.filter import ObservationFilter
from coach.graph_managers.parameters import ScheduleParameters
from coach.networks.parameters import MiddlewareParameters, NetworkParameters
from coach.parameter_tree import flatten, validate_parameters
from coach.parameters import (
    apply_overrides,
    get_parameter,
    parse_override,
    parse_value,
    set_parameter,
)
from coach.schedules import (
    ConstantSchedule,
    ExponentialSchedule,
    LinearSchedule,
    PieceWiseSchedule,
)


def _roots() -> dict[str, Any]:
    return {"agent": DQNAgentParameters(), "schedule": ScheduleParameters()}


# -- parse_value --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("  42 ", 42),
        ("0.25", 0.25),
        ("1e-3", 0.001),
        ("-3", -3),
        ("-2.5", -2.5),
        ("+4", 4),
        ("[1, 2, 3]", [1, 2, 3]),
        ("[-1, [2.5]]", [-1, [2.5]]),
        ("(1, 2)", (1, 2)),
        ("{'a': 1, 'b': [2, 3]}", {"a": 1, "b": [2, 3]}),
        ("None", None),
        ("True", True),
        ("False", False),
        ("'text'", "text"),
        ("EnvironmentSteps(500)", EnvironmentSteps(500)),
        ("EnvironmentEpisodes(3)", EnvironmentEpisodes(3)),
        ("TrainingSteps(0)", TrainingSteps(0)),
        ("ConstantSchedule(0.5)", ConstantSchedule(0.5)),
        ("LinearSchedule(1.0, 0.05, 100)", LinearSchedule(1.0, 0.05, 100)),
        (
            "LinearSchedule(initial_value=1.0, final_value=0.05, decay_steps=100)",
            LinearSchedule(1.0, 0.05, 100),
        ),
        ("LinearSchedule(1.0, final_value=0.05, decay_steps=100)", LinearSchedule(1.0, 0.05, 100)),
        ("ExponentialSchedule(1.0, 0.1, 0.99)", ExponentialSchedule(1.0, 0.1, 0.99)),
    ],
)
def test_parse_value(text: str, expected: object) -> None:
    value = parse_value(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(("text", "sign"), [("inf", 1), ("-inf", -1)])
def test_parse_value_infinities(text: str, sign: int) -> None:
    value = parse_value(text)
    assert math.isinf(value)
    assert math.copysign(1, value) == sign


def test_parse_value_nested_piecewise_schedule() -> None:
    value = parse_value(
        "PieceWiseSchedule([(ConstantSchedule(1.0), EnvironmentSteps(10)), "
        "(LinearSchedule(1.0, 0.1, 90), 90), (ConstantSchedule(0.1), 0)])"
    )
    assert isinstance(value, PieceWiseSchedule)
    assert value.pieces == [
        (ConstantSchedule(1.0), 10),
        (LinearSchedule(1.0, 0.1, 90), 90),
        (ConstantSchedule(0.1), 0),
    ]
    assert value(5) == 1.0
    assert value(55) == pytest.approx(0.55)
    assert value(500) == 0.1


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "open('x')",
        "eval('1')",
        "exec('x = 1')",
        "print(1)",
        "os.system('ls')",
        "(lambda: 1)()",
        "EnvironmentSteps.__class__",
        "EnvironmentSteps(__import__('os'))",
        "[1, 2].pop()",
        "1 + 2",
        "some_name",
    ],
)
def test_disallowed_values_raise(text: str) -> None:
    with pytest.raises(CoachError):
        parse_value(text)


def test_disallowed_call_names_the_allowed_ones() -> None:
    with pytest.raises(CoachError, match=r"open\(\.\.\.\) is not allowed.*LinearSchedule"):
        parse_value("open('x')")


def test_disallowed_calls_are_never_executed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for text in (
        "open('created_by_open', 'w')",
        "__import__('os').system('touch created_by_system')",
        "__import__('pathlib').Path('created_by_pathlib').touch()",
        "EnvironmentSteps(open('created_in_argument', 'w'))",
    ):
        with pytest.raises(CoachError):
            parse_value(text)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("EnvironmentSteps(-1)", ">= 0"),
        ("EnvironmentSteps(1.5)", "whole number"),
        ("LinearSchedule(1.0)", "LinearSchedule"),
        ("LinearSchedule(1.0, 0.0, -5)", "decay_steps"),
        ("[1, 2", "cannot parse"),
    ],
)
def test_bad_constructor_arguments_and_syntax_raise_coach_error(text: str, fragment: str) -> None:
    with pytest.raises(CoachError, match=fragment):
        parse_value(text)


def test_register_constructor_allows_a_new_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parameters, "CONSTRUCTORS", dict(parameters.CONSTRUCTORS))

    @dataclasses.dataclass
    class Pair:
        a: int
        b: int

    with pytest.raises(CoachError):
        parse_value("Pair(1, 2)")
    parameters.register_constructor(Pair)
    assert parse_value("Pair(1, b=2)") == Pair(1, 2)
    parameters.register_constructor(Pair, name="P")
    assert parse_value("P(3, 4)") == Pair(3, 4)


# -- apply_overrides ----------------------------------------------------------------------


def test_overrides_apply_in_turn_and_a_path_may_repeat_its_value() -> None:
    roots = _roots()
    texts = ["agent.algorithm.discount=0.5", "schedule.heatup_steps=EnvironmentSteps(7)"]
    apply_overrides(roots, [*texts, "agent.algorithm.discount = 0.50"])  # the same value
    assert roots["agent"].algorithm.discount == 0.5
    assert roots["schedule"].heatup_steps == EnvironmentSteps(7)


def test_a_path_given_twice_with_different_values_is_refused() -> None:
    texts = ["agent.algorithm.discount=0.9", "schedule.heatup_steps=EnvironmentSteps(7)"]
    with pytest.raises(CoachError) as error:
        apply_overrides(_roots(), [*texts, "agent.algorithm.discount=0.5"])
    assert str(error.value) == (
        "-cp agent.algorithm.discount is given twice, as '0.9' and '0.5': give it once"
    )


# -- set_parameter ------------------------------------------------------------------------


def test_set_nested_fields_from_text() -> None:
    roots = _roots()
    set_parameter(roots, "agent.algorithm.discount", "0.5")
    set_parameter(roots, "agent.algorithm.batch_size", "64")
    set_parameter(roots, "agent.memory.max_size", "1000")
    set_parameter(roots, "schedule.heatup_steps", "EnvironmentSteps(500)")
    set_parameter(roots, "schedule.evaluation_steps", "EnvironmentEpisodes(3)")
    set_parameter(roots, "agent.exploration.epsilon_schedule", "LinearSchedule(1.0, 0.05, 100)")
    agent, schedule = roots["agent"], roots["schedule"]
    assert agent.algorithm.discount == 0.5
    assert agent.algorithm.batch_size == 64
    assert agent.memory.max_size == 1000
    assert schedule.heatup_steps == EnvironmentSteps(500)
    assert schedule.evaluation_steps == EnvironmentEpisodes(3)
    assert agent.exploration.epsilon_schedule == LinearSchedule(1.0, 0.05, 100)


def test_set_takes_python_values_too() -> None:
    roots = _roots()
    set_parameter(roots, "agent.algorithm.discount", 0.9)
    set_parameter(roots, "schedule.improve_steps", TrainingSteps(10))
    assert roots["agent"].algorithm.discount == 0.9
    assert roots["schedule"].improve_steps == TrainingSteps(10)


@pytest.mark.parametrize("value", ["1", 1])
def test_an_int_for_a_float_field_becomes_a_float(value: object) -> None:
    roots = _roots()
    set_parameter(roots, "agent.algorithm.discount", value)
    assert roots["agent"].algorithm.discount == 1.0
    assert type(roots["agent"].algorithm.discount) is float


def test_set_through_a_dict_key() -> None:
    roots = _roots()
    set_parameter(roots, "agent.network_wrappers.main.learning_rate", "0.01")
    assert roots["agent"].network_wrappers["main"].learning_rate == 0.01
    set_parameter(roots, "agent.network_wrappers.main.learning_rate", "2")
    assert roots["agent"].network_wrappers["main"].learning_rate == 2.0
    assert type(roots["agent"].network_wrappers["main"].learning_rate) is float
    set_parameter(roots, "agent.network_wrappers.main.input_embedders.observation.scheme", "[8]")
    assert roots["agent"].network_wrappers["main"].input_embedders["observation"].scheme == [8]


def test_set_through_a_list_index() -> None:
    roots = _roots()
    set_parameter(roots, "agent.network_wrappers.main.heads.0.name", "q2")
    set_parameter(roots, "agent.network_wrappers.main.middleware.scheme.1", "32")
    network = roots["agent"].network_wrappers["main"]
    assert network.heads[0].name == "q2"
    assert network.middleware.scheme == [64, 32]


def test_a_list_index_out_of_range_names_the_valid_indices() -> None:
    with pytest.raises(CoachError, match=r"has no field '2'; valid fields: 0, 1"):
        set_parameter(_roots(), "agent.network_wrappers.main.middleware.scheme.2", "8")


def test_optional_fields_take_none_and_values() -> None:
    roots = _roots()
    set_parameter(roots, "agent.network_wrappers.main.gradient_clip_norm", "0.5")
    assert roots["agent"].network_wrappers["main"].gradient_clip_norm == 0.5
    set_parameter(roots, "agent.network_wrappers.main.gradient_clip_norm", "None")
    assert roots["agent"].network_wrappers["main"].gradient_clip_norm is None


@pytest.mark.parametrize(
    ("path", "where", "valid"),
    [
        ("agent.algorithm.discont", "agent.algorithm", "discount"),
        ("agent.algoritm.discount", "agent", "algorithm"),
        ("agent.network_wrappers.mian.learning_rate", "agent.network_wrappers", "main"),
        ("schedule.heatup", "schedule", "heatup_steps"),
    ],
)
def test_a_typo_names_the_valid_fields(path: str, where: str, valid: str) -> None:
    with pytest.raises(CoachError) as error:
        set_parameter(_roots(), path, "1")
    message = str(error.value)
    assert where in message
    assert "valid fields" in message
    assert valid in message


@pytest.mark.parametrize(
    ("path", "where", "valid"),
    [
        ("agent.algorithm.discont", "agent.algorithm", "discount"),
        ("agent.network_wrappers.mian.learning_rate", "agent.network_wrappers", "main"),
    ],
)
def test_get_parameter_reads_a_value_and_names_the_valid_fields_of_a_typo(
    path: str, where: str, valid: str
) -> None:
    roots = _roots()
    roots["agent"].algorithm.discount = 0.97
    assert get_parameter(roots, "agent.algorithm.discount") == 0.97
    assert get_parameter(roots, "schedule.heatup_steps") == roots["schedule"].heatup_steps
    with pytest.raises(CoachError) as error:
        get_parameter(roots, path)
    assert f"{where} has no field" in str(error.value) and valid in str(error.value)
    with pytest.raises(CoachError, match="no parameters named 'agnt'; valid roots: agent"):
        get_parameter(roots, "agnt.algorithm.discount")


def test_a_typo_lists_every_field_of_the_group_and_sets_nothing() -> None:
    roots = _roots()
    before = flatten(roots)
    with pytest.raises(CoachError) as error:
        set_parameter(roots, "agent.algorithm.discont", "0.9")
    for name in ("discount", "batch_size", "loss", "huber_delta"):
        assert name in str(error.value)
    assert flatten(roots) == before


def test_a_leaf_value_has_no_fields_and_says_how_to_set_it_whole() -> None:
    roots = _roots()
    roots["agent"].exploration.epsilon_schedule = LinearSchedule(1.0, 0.1, 500)
    with pytest.raises(CoachError, match="has no field 'num_steps'"):
        set_parameter(roots, "schedule.heatup_steps.num_steps", "5")
    with pytest.raises(CoachError) as error:
        set_parameter(roots, "agent.exploration.epsilon_schedule.decay_steps", "50")
    assert str(error.value) == (
        "agent.exploration.epsilon_schedule has no field 'decay_steps': it is one value, "
        "LinearSchedule(initial_value=1.0, final_value=0.1, decay_steps=500), set as a whole "
        "(agent.exploration.epsilon_schedule=...)"
    )


@pytest.mark.parametrize(
    ("path", "value", "expected_type"),
    [
        ("agent.algorithm.discount", "'abc'", "float"),
        ("agent.algorithm.discount", "[0.9]", "float"),
        ("agent.algorithm.batch_size", "1.5", "int"),
        ("agent.algorithm.batch_size", "'x'", "int"),
        ("agent.algorithm.batch_size", "True", "int"),
        ("agent.algorithm.num_consecutive_playing_steps", "TrainingSteps(3)", "EnvironmentSteps"),
        ("agent.exploration.epsilon_schedule", "0.1", "Schedule"),
        ("agent.network_wrappers.main.middleware.scheme", "[1.5]", "list"),
        ("agent.name", 5, "str"),
    ],
)
def test_a_wrong_type_names_the_path_and_the_expected_type(
    path: str, value: object, expected_type: str
) -> None:
    roots = _roots()
    before = flatten(roots)
    with pytest.raises(CoachError) as error:
        set_parameter(roots, path, value)
    message = str(error.value)
    assert path in message
    assert f"takes {expected_type}" in message
    assert flatten(roots) == before


@pytest.mark.parametrize(
    ("path", "expected_type"),
    [("agent.algorithm.discount", "float"), ("agent.algorithm.batch_size", "int")],
)
def test_a_plain_word_for_a_number_field_names_the_path_and_type(
    path: str, expected_type: str
) -> None:
    with pytest.raises(CoachError) as error:
        set_parameter(_roots(), path, "abc")
    assert path in str(error.value)
    assert expected_type in str(error.value)


def test_a_wrong_item_type_names_the_item_type() -> None:
    with pytest.raises(CoachError) as error:
        set_parameter(_roots(), "agent.network_wrappers.main.middleware.scheme", "[1.5]")
    assert "list[int]" in str(error.value)


def test_a_list_element_is_type_checked() -> None:
    roots = _roots()
    with pytest.raises(CoachError, match="int"):
        set_parameter(roots, "agent.network_wrappers.main.middleware.scheme.0", "1.5")


def test_none_is_not_accepted_by_a_plain_str_field() -> None:
    roots = _roots()
    try:
        set_parameter(roots, "agent.name", "None")
    except CoachError:
        return
    assert isinstance(roots["agent"].name, str)


def test_an_unknown_root_names_the_valid_roots() -> None:
    with pytest.raises(
        CoachError, match=r"no parameters named 'agnt'; valid roots: agent, schedule"
    ):
        set_parameter(_roots(), "agnt.algorithm.discount", "0.9")


@pytest.mark.parametrize("path", ["", "  ", "agent..discount", ".agent", "agent."])
def test_malformed_paths_raise(path: str) -> None:
    with pytest.raises(CoachError, match="bad parameter path"):
        set_parameter(_roots(), path, "1")


def test_a_bare_root_names_its_fields() -> None:
    with pytest.raises(CoachError, match=r"whole group.*heatup_steps"):
        set_parameter(_roots(), "schedule", "1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("foo", "foo"),
        ("dqn_agent", "dqn_agent"),
        ("'quoted'", "quoted"),
        ('"two words"', "two words"),
        ("two words", "two words"),
        ("123", "123"),
        ("[1]", "[1]"),
    ],
)
def test_str_fields_take_plain_words(text: str, expected: str) -> None:
    roots = _roots()
    set_parameter(roots, "agent.name", text)
    assert roots["agent"].name == expected


def test_loss_takes_a_plain_word() -> None:
    roots = _roots()
    set_parameter(roots, "agent.algorithm.loss", "mse")
    assert roots["agent"].algorithm.loss == "mse"


# -- parse_override -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("agent.algorithm.discount=0.98", ("agent.algorithm.discount", "0.98")),
        (
            " schedule.heatup_steps = EnvironmentSteps(500) ",
            ("schedule.heatup_steps", "EnvironmentSteps(500)"),
        ),
        ("agent.name=a=b", ("agent.name", "a=b")),
        ("agent.name=", ("agent.name", "")),
    ],
)
def test_parse_override_splits_path_and_value(text: str, expected: tuple[str, str]) -> None:
    assert parse_override(text) == expected


@pytest.mark.parametrize("text", ["agent.algorithm.discount", "", "=0.5", "  =1"])
def test_parse_override_rejects_text_without_path_or_equals(text: str) -> None:
    with pytest.raises(CoachError, match="path=value"):
        parse_override(text)


def test_parse_override_then_set_parameter() -> None:
    roots = _roots()
    set_parameter(roots, *parse_override("agent.algorithm.discount=0.98"))
    assert roots["agent"].algorithm.discount == 0.98


# -- flatten ------------------------------------------------------------------------------


def _modified_roots() -> dict[str, Any]:
    agent = DQNAgentParameters()
    agent.name = "cartpole_dqn"
    agent.algorithm.discount = 0.97
    agent.algorithm.batch_size = 64
    agent.algorithm.num_consecutive_playing_steps = EnvironmentSteps(256)
    agent.algorithm.loss = "mse"
    agent.exploration.epsilon_schedule = PieceWiseSchedule(
        [(ConstantSchedule(1.0), 100), (LinearSchedule(1.0, 0.1, 900), 900)]
    )
    agent.exploration.evaluation_epsilon = 0.05
    agent.memory.max_size = 5000
    agent.network_wrappers["main"] = NetworkParameters(
        middleware=MiddlewareParameters(scheme=[256, 128, 32], activation="tanh"),
        learning_rate=2.3e-3,
        gradient_clip_norm=10.0,
        create_target_network=True,
    )
    schedule = ScheduleParameters(
        heatup_steps=EnvironmentEpisodes(4), evaluation_steps=EnvironmentSteps(1000)
    )
    return {"agent": agent, "schedule": schedule}


def _differently_modified_roots() -> dict[str, Any]:
    roots = _roots()
    agent = roots["agent"]
    agent.name = "other"
    agent.algorithm.discount = 0.5
    agent.algorithm.huber_delta = 3.0
    agent.exploration.epsilon_schedule = ExponentialSchedule(1.0, 0.01, 0.9)
    agent.network_wrappers["main"].middleware.scheme = [8]
    agent.network_wrappers["main"].heads[0].name = "other_head"
    agent.network_wrappers["main"].weight_decay = 0.1
    roots["schedule"].improve_steps = TrainingSteps(7)
    return roots


def test_flatten_lists_leaves_by_path() -> None:
    settable, fixed = flatten(_modified_roots())
    assert fixed == {}
    assert settable["agent.algorithm.discount"] == 0.97
    assert settable["agent.algorithm.loss"] == "mse"
    assert settable["agent.network_wrappers.main.middleware.scheme"] == [256, 128, 32]
    assert settable["agent.network_wrappers.main.heads.0.name"] == "q"
    assert settable["agent.network_wrappers.main.gradient_clip_norm"] == 10.0
    assert settable["schedule.heatup_steps"] == "EnvironmentEpisodes(4)"
    assert settable["agent.algorithm.num_consecutive_playing_steps"] == "EnvironmentSteps(256)"
    assert settable["agent.exploration.epsilon_schedule"].startswith("PieceWiseSchedule(")


def test_flatten_round_trips_through_set_parameter() -> None:
    original = _modified_roots()
    settable, _ = flatten(original)
    target = _differently_modified_roots()
    assert target != original
    for path, value in settable.items():
        set_parameter(target, path, value)
    assert target == original
    assert flatten(target)[0] == settable


def test_flatten_round_trips_as_text() -> None:
    """As a command line would give them back: every value as text."""
    original = _modified_roots()
    settable, _ = flatten(original)
    target = _differently_modified_roots()
    for path, value in settable.items():
        set_parameter(target, path, value if isinstance(value, str) else repr(value))
    assert target == original


class _ScaleFilter(ObservationFilter):
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __repr__(self) -> str:
        return f"_ScaleFilter({self.factor})"


def test_flatten_records_what_an_override_cannot_express_as_fixed() -> None:
    roots = _roots()
    roots["agent"].input_filter.observation_filters = {"observation": [_ScaleFilter(2.0)]}
    settable, fixed = flatten(roots)
    assert fixed == {"agent.input_filter.observation_filters.observation.0": "_ScaleFilter(2.0)"}
    assert not any(path.startswith("agent.input_filter.observation_filters") for path in settable)


def test_a_network_becomes_recurrent_by_an_override_and_its_record_replays() -> None:
    roots = _roots()
    set_parameter(
        roots, "agent.network_wrappers.main.middleware.recurrent", "RecurrentParameters(size=32)"
    )
    set_parameter(roots, "agent.network_wrappers.main.middleware.recurrent.cell", "'gru'")
    layer = roots["agent"].network_wrappers["main"].middleware.recurrent
    assert (layer.cell, layer.size, layer.layers) == ("gru", 32, 1)
    settable, _ = flatten(roots)
    written = settable["agent.network_wrappers.main.middleware.recurrent"]
    assert written == "RecurrentParameters(cell='gru', size=32, layers=1)"
    assert not any(path.endswith("recurrent.cell") for path in settable)  # written whole
    base = _roots()  # a preset whose network is feed-forward takes the record back
    set_parameter(base, "agent.network_wrappers.main.middleware.recurrent", written)
    assert base["agent"].network_wrappers["main"].middleware.recurrent == layer
    set_parameter(base, "agent.network_wrappers.main.middleware.recurrent.size", "7")
    with pytest.raises(CoachError, match=r"recurrent\.size must be"):
        set_parameter(base, "agent.network_wrappers.main.middleware.recurrent.size", "0")
        validate_parameters(base)


def test_a_value_that_does_not_parse_is_refused_with_the_reason() -> None:
    from coach import DQNAgentParameters
    from coach.parameters import set_parameter

    roots = {"agent": DQNAgentParameters()}
    for value, reason in (
        ("LinearSchedule(1.0, 0.05, 1e4)", "decay_steps must be a whole number, got 10000.0"),
        ("LinearSchedule(1.0, 0.05)", "missing 1 required positional argument: 'decay_steps'"),
        ("Foo(3)", "Foo(...) is not allowed in a value"),
    ):
        with pytest.raises(CoachError) as error:
            set_parameter(roots, "agent.exploration.epsilon_schedule", value)
        message = str(error.value)
        assert message.startswith(
            f"agent.exploration.epsilon_schedule takes Schedule, not {value!r}"
        )
        assert reason in message


@pytest.mark.parametrize("text", ["episodes", "'episodes'"])
def test_a_learning_rate_clock_is_set_as_params_yaml_and_the_command_line_write_it(
    text: str,
) -> None:
    """params.yaml keeps the clock as bare text, ``-cp`` may quote it: both are read back."""
    roots = _roots()
    apply_overrides(roots, [f"agent.algorithm.learning_rate_clock={text}"])
    assert roots["agent"].algorithm.learning_rate_clock == "episodes"
