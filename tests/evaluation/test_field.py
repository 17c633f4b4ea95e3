"""The tournament's default field (:mod:`c4jax.evaluation.field`) lists the shipped agents as the registry does."""

from __future__ import annotations

from c4jax import agents, games
from c4jax.evaluation import field
from c4jax.io import checkpoint


def test_default_field_is_the_references_then_the_shipped_agents_in_the_registry_order():
    root = agents.checkpoints_dir()
    shipped = [n for n in agents.known_names() if (root / n / checkpoint.METADATA_FILE).is_file()]
    got = field.default_agents(games.DEFAULT)
    baselines = games.card_of(games.DEFAULT).baselines
    assert got[:len(baselines)] == baselines == ("1steplA", "2steplA")  # the thesis' field
    assert list(dict.fromkeys(s.split(":")[0] for s in got[len(baselines):])) == shipped and shipped


def test_another_games_field_is_its_shipped_agents_by_their_in_game_names():
    got = field.default_agents("checkers")
    assert got and all(s.startswith("checkers/") for s in got)
    for spec in got:
        agents.load(spec)  # every name of the field loads


def test_shipped_names_are_the_registry_names_of_agent_folders(tmp_path, monkeypatch):
    for name in ("b_agent", "A_agent", "checkers/c_agent"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / checkpoint.METADATA_FILE).write_text("{}")
    (tmp_path / "no_checkpoint").mkdir()
    monkeypatch.setenv("C4JAX_CHECKPOINTS", str(tmp_path))
    from c4jax.agents import shipped

    assert shipped.checkpoints_dir() == tmp_path
    assert shipped.names(games.DEFAULT) == ["A_agent", "b_agent"]
    assert shipped.names("checkers") == ["checkers/c_agent"]
    assert field.default_agents(games.DEFAULT) == games.card_of(games.DEFAULT).baselines  # metadata without a format_version is no checkpoint
