"""``arena leaderboard --export DIR --replays ...``: the exported boards link to the replay
pages written beside them and carry the Elo plot (over the web tests' real database,
conftest.py's ``web_db``)."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html import escape
from pathlib import Path

from arena.store import Store


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_exported_boards_link_every_written_replay(web_db: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "boards"
    done = arena("leaderboard", "--db", str(web_db[0]), "--export", str(out), "--replays", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (out / "matches").iterdir())
    assert len(written) == 4                  # the newest two of each board
    linked: list[str] = []
    with Store(str(web_db[0])) as store:
        for variant in ("classic", "extreme"):
            html = (out / f"{variant}.html").read_text(encoding="utf-8")
            md = (out / f"{variant}.md").read_text(encoding="utf-8")
            section = html.split('<ul id="replays">', 1)[1].split("</ul>", 1)[0]
            hrefs = re.findall(r'<a href="(matches/[^"]+\.html)">', section)
            assert len(hrefs) == 2 and "## Replays" in md
            for href in hrefs:
                assert (out / href).is_file()        # the link opens a page that was written
                assert f"]({href})" in md
                record = store.load_match(href.removeprefix("matches/").removesuffix(".html"))
                assert record.variant == variant     # each board lists its own variant's games
                assert escape(", ".join(f"{b} {t}" for b, t in zip(record.bots, record.totals))) in section
                assert f"{record.finished_at:%Y-%m-%d %H:%M} UTC" in section
            linked += hrefs
            # The Elo plot, static: one line per bot of the board.
            svg = html[html.index("<svg"):html.index("</svg>") + len("</svg>")]
            root = ET.fromstring(svg)
            rows = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0].count("<tr>")
            assert len(root.findall("polyline")) == rows > 0
    assert sorted(h.removeprefix("matches/") for h in linked) == written


def test_no_replays_no_section(web_db: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "boards"
    done = arena("leaderboard", "--db", str(web_db[0]), "--export", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    html = (out / "classic.html").read_text(encoding="utf-8")
    assert 'id="replays"' not in html and "## Replays" not in (out / "classic.md").read_text(encoding="utf-8")
    assert "<svg" in html and not (out / "matches").exists()
