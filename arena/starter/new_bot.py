"""``arena new-bot NAME``: a starter bot that runs, and passes ``arena bot check``, as written.

The files come from ``arena/starter/templates/<lang>/`` (package data), with ``__BOT_NAME__``
and ``__CLASS_NAME__`` filled in; a plain replace, not ``string.Template``, because
JavaScript's template literals use ``${...}`` too. Every decision method of a
template answers legally, so the bot plays every decision of both variants before
its author has written a line; comments mark where the author's logic goes.

* ``python``: ``bot.py`` (a subclass of :class:`arena.sdk.Bot`) and a README.
* ``node``: ``bot.js``, ``package.json`` (the same ``@grpc/grpc-js`` and
  ``@grpc/proto-loader`` versions as the sample Node.js bot), a copy of the installed
  ``arena.proto`` so that the folder is self-contained, and a README; ``npm install``
  is run when npm is here.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from arena.tournament.lineup import NODE_BOT_DIR, PROTO_FILE, LineupError, check_name

LANGS = ("python", "node")
TEMPLATES = Path(__file__).resolve().parent / "templates"
# Files whose mode gets the executable bits, so that ``./NAME/bot.py`` runs too.
SCRIPTS = ("bot.py", "bot.js")
NPM_TIMEOUT = 300.0     # seconds; the two packages take a few seconds from the npm cache


class NewBotError(LineupError):
    """A new bot cannot be written there (bad name, folder in use): one line, exit 2."""


@dataclass
class NewBot:
    """What ``arena new-bot`` wrote."""

    name: str
    lang: str
    folder: Path
    files: list[Path] = field(default_factory=list)

    @property
    def script(self) -> Path:
        return self.folder / ("bot.py" if self.lang == "python" else "bot.js")


def class_name(name: str) -> str:
    """A Python class name for a bot name.

    >>> class_name("my-bot"), class_name("wizzy"), class_name("3rd_try.v2")
    ('MyBot', 'WizzyBot', 'Bot3rdTryV2Bot')
    """
    words = "".join(word[:1].upper() + word[1:] for word in re.split(r"[^A-Za-z0-9]+", name) if word)
    if not words or words[0].isdigit():
        words = "Bot" + words
    return words if words.endswith("Bot") else words + "Bot"


def package_json(name: str) -> str:
    """The Node.js bot's package.json, with the sample bot's versions of the two packages.

    >>> data = json.loads(package_json("My.Bot"))
    >>> data["name"], sorted(data["dependencies"])
    ('my.bot', ['@grpc/grpc-js', '@grpc/proto-loader'])
    """
    sample = json.loads((NODE_BOT_DIR / "package.json").read_text())
    data = {
        "name": name.lower(),          # npm wants lower case; bot names are already URL-safe
        "version": "0.1.0",
        "description": f"{name}: a Wizard Arena bot",
        "private": True,
        "main": "bot.js",
        "scripts": {"start": "node bot.js"},
        "engines": sample.get("engines", {"node": ">=18"}),
        "dependencies": {package: sample["dependencies"][package]
                         for package in ("@grpc/grpc-js", "@grpc/proto-loader")},
    }
    return json.dumps(data, indent=2) + "\n"


def files_for(name: str, lang: str) -> dict[str, str]:
    """Every file of the new bot, by its name in the folder, with its text.

    >>> sorted(files_for("wizzy", "python"))
    ['README.md', 'bot.py']
    >>> sorted(files_for("wizzy", "node"))
    ['README.md', 'arena.proto', 'bot.js', 'package.json']
    >>> "class WizzyBot(Bot):" in files_for("wizzy", "python")["bot.py"]
    True
    """
    files = {}
    for template in sorted((TEMPLATES / lang).glob("*.tmpl")):
        text = template.read_text(encoding="utf-8")
        files[template.name.removesuffix(".tmpl")] = (text.replace("__BOT_NAME__", name)
                                                      .replace("__CLASS_NAME__", class_name(name)))
    if lang == "node":
        files["package.json"] = package_json(name)
        files["arena.proto"] = PROTO_FILE.read_text(encoding="utf-8")
    return files


def check_target(name: str, lang: str, folder: Path) -> None:
    """Refuse, in one line, what cannot be written: a bad name or language, a folder
    that is in use. Nothing is written."""
    check_name(name)
    if lang not in LANGS:
        raise NewBotError(f"--lang must be one of {', '.join(LANGS)} (got {lang!r})")
    if folder.exists() and not folder.is_dir():
        raise NewBotError(f"{folder} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise NewBotError(f"{folder} already exists and is not empty: choose another NAME or --dir")


def write_bot(name: str, lang: str, folder: Path) -> NewBot:
    """Write the bot's files into ``folder`` (created, with its parents, if needed)."""
    check_target(name, lang, folder)
    files = files_for(name, lang)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        bot = NewBot(name, lang, folder)
        for filename, text in files.items():
            path = folder / filename
            path.write_text(text, encoding="utf-8")
            if filename in SCRIPTS:
                path.chmod(0o755)
            bot.files.append(path)
    except OSError as error:
        raise NewBotError(f"cannot write {folder}: {error.strerror or error}") from None
    return bot


def npm_install(folder: Path) -> tuple[bool, str]:
    """Run ``npm install`` in ``folder`` when npm is here: (it failed, one line saying
    what happened or what to run). No npm is not a failure: the author is told the
    command to run once Node.js is installed."""
    npm = shutil.which("npm")
    if npm is None:
        return False, f"npm is not installed: once Node.js is, run `npm install` in {folder}"
    try:
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent"], cwd=folder,
                              capture_output=True, text=True, timeout=NPM_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        return True, f"npm install failed ({error}): run `npm install` in {folder} yourself"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return True, f"npm install failed ({last}): run `npm install` in {folder} yourself"
    return False, f"ran npm install in {folder}: @grpc/grpc-js and @grpc/proto-loader are in its node_modules"
