"""A tournament's settings as stored (arena.settings): new settings go to the store and
back unchanged, key for key and in order, and settings stored by earlier versions or by a
server for a tournament organised elsewhere read with the defaults every reader used."""

from __future__ import annotations

import json
from pathlib import Path

from arena.settings import BotEntry, CodeStamp, SprtSettings, TournamentSettings
from arena.tournament.settings import TournamentRequest, build_settings, finalize_games
from engine import GameConfig

# The keys of the stored form, in their order: the stored JSON is compared byte for byte.
STORED_KEYS = ["game", "games", "seed", "seed_given", "move_time", "time_bank", "max_faults", "concurrency", "server",
               "tls", "tls_ca", "tls_cert", "tls_key", "deals", "bots", "format", "sprt", "gauntlet", "sandbox",
               "fresh_per_match", "shared_processes", "memory_limit_mb", "process_limit", "file_size_limit_mb",
               "open_files_limit", "bot_env"]


def stored(settings: TournamentSettings) -> str:
    """The JSON the store keeps (arena.wire.json_codec writes the same keys in the same order)."""
    return json.dumps(settings.to_dict())


def new_settings(tmp_path: Path, **given: object) -> TournamentSettings:
    """Settings as ``arena tournament`` makes them, with bots of their own."""
    bot = tmp_path / "bot.py"
    bot.write_text("pass\n")
    request = TournamentRequest(str(tmp_path / "arena.db"), no_samples=True, seed=5,
                                bots=[f"{name}={bot}" for name in "abcd"], **given)  # type: ignore[arg-type]
    settings = build_settings(request, lambda line: None)
    finalize_games(settings, 8, lambda line: None)
    return settings


def test_new_settings_go_to_the_store_and_back_unchanged(tmp_path: Path) -> None:
    for given in ({}, {"variant": "extreme", "players": 3, "deals": "independent", "bot_env": ["K=v"]},
                  {"gauntlet": "a", "move_time": 0.5, "sandbox": "none"}):
        settings = new_settings(tmp_path, **given)
        data = json.loads(stored(settings))
        assert list(data) == STORED_KEYS
        again = TournamentSettings.from_dict(data)
        assert again == settings and stored(again) == stored(settings)


def test_an_ab_test_and_stamped_bots_go_to_the_store_and_back_unchanged() -> None:
    settings = TournamentSettings(
        game=GameConfig(variant="classic", players=3), games=12, seed=3, format="sprt",
        bots=[BotEntry("new", ["./new"], Path("/bots/new"), stamp=CodeStamp("ab" * 32, 2, 100)),
              BotEntry("old", ["./old"]), BotEntry("x", []), BotEntry("y", [])],
        sprt=SprtSettings("new", "old", 0.0, 20.0))
    data = json.loads(stored(settings))
    assert data["sprt"]["scale"] == "leaderboard" and data["bots"][0]["stamp"]["files"] == 2
    again = TournamentSettings.from_dict(data)
    assert again == settings and stored(again) == stored(settings)
    assert again.stamps() == {"new": CodeStamp("ab" * 32, 2, 100)} and again.opponents() == ["x", "y"]


def test_settings_stored_by_an_earlier_version_read_with_the_defaults() -> None:
    old = {"game": {"variant": "extreme", "players": 3}, "games": 6, "seed": 9, "move_time": 2.0,
           "bots": [{"name": "a", "command": ["./a"]}, {"name": "b"}], "a_key_of_a_later_version": 1}
    settings = TournamentSettings.from_dict(old)
    assert (settings.variant, settings.named_variant, settings.players, settings.games) == ("extreme", "extreme", 3, 6)
    assert settings.move_time == 2.0 and settings.time_bank == 10.0 and settings.max_faults == 3
    assert settings.deals == "duplicate" and settings.format == "round-robin" and settings.sprt is None
    assert settings.server is None and settings.tls is False and settings.client_tls() is None
    assert settings.seed_given is False and settings.shared_processes is False and settings.sandbox == "auto"
    assert settings.organised_elsewhere is False and settings.bot_names() == ["a", "b"] and settings.bot_env == {}
    assert "organised_elsewhere" not in settings.to_dict() and "a_key_of_a_later_version" not in settings.to_dict()


def test_an_ab_test_stored_before_its_scale_keeps_no_scale() -> None:
    old = {"game": {"variant": "classic", "players": 4}, "games": 16, "format": "sprt",
           "sprt": {"candidate": "a", "baseline": "b", "elo0": 0, "elo1": 10, "alpha": 0.05, "beta": 0.05}}
    settings = TournamentSettings.from_dict(old)
    assert settings.sprt == SprtSettings("a", "b", 0.0, 10.0, scale=None)
    assert "scale" not in settings.to_dict()["sprt"]


def test_a_tournament_organised_elsewhere_reads_from_its_few_keys() -> None:
    for stub, named in (({"organised_elsewhere": True, "game": {"variant": "extreme"}}, "extreme"),
                        ({"organised_elsewhere": True}, None)):     # stubs stored before they kept the variant
        settings = TournamentSettings.from_dict(stub)
        assert settings.organised_elsewhere and settings.named_variant == named
        assert settings.variant == (named or "classic") and settings.bots == [] and settings.sprt is None
        assert settings.to_dict()["organised_elsewhere"] is True
