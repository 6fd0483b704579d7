"""A bot's own files: what of the disk a bot the arena starts may read, and the private
copy it runs from.

The rule (docs/security.md, "What a bot can read"):

- The bot's **program** is the first path its command names outside the system and the
  Python installation: the script after an interpreter (``python3 bot.py``, ``node
  bot.js``), the program itself (``./bot``), or a folder (``java -cp mybot Main``).
- The program's folder is **the bot's own** when it is a folder of its own: not the
  folder the command runs in nor one above it (the organiser's working folder, which
  holds the database, the logs and TLS material), not a home or top-level folder, and
  holding no SQLite file, no ``arena-logs`` folder and no private key or ``.env`` file.
  Then the bot sees that whole folder (``arena new-bot`` makes one); otherwise it sees
  its program file alone.
- Every other path its command names (``--model /data/x/model.bin``) is readable as it
  is, that path alone: the file, or the folder named, never its parent.

The own files (the folder, or the lone program) are copied when a run starts into a
private folder readable by the bot's uid and bound read-only where the originals are:
the bot runs what was there when the tournament started whatever happens to the
originals, a private folder (mode 700) needs no ``chmod``, and the copy's SHA-256
(:class:`CodeStamp`) says which code played.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()); (root / "bot").mkdir()
    >>> _ = (root / "bot" / "main.py").write_text("print('hi')"); _ = (root / "model.bin").write_bytes(b"1")
    >>> files = find_bot_files(["python3", "bot/main.py", "--model", "model.bin"], cwd=root)
    >>> files.folder == root / "bot", files.data == (root / "model.bin",)
    (True, True)
    >>> find_bot_files(["python3", "main.py"], cwd=root / "bot").shared_because
    'it is the folder the command runs in'
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import stat
import sys
from collections.abc import Collection
from pathlib import Path

from arena.settings import BotFiles, CodeStamp

MIB = 1 << 20
MAX_BYTES = 256 * MIB     # the most a bot's own files may hold (the copy's size cap)
MAX_FILES = 20_000
LOGS_FOLDER = "arena-logs"
# Never copied, never hashed: a repository's history and Python's byte-code caches.
SKIPPED = (".git", "__pycache__")
# Files that mark a folder as shared (secrets a bot must not read): the organiser's .env,
# TLS keys and certificates, SQLite databases (found by their header).
SECRET_NAMES = (".env",)
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".env", ".sql")
SQLITE_HEADER = b"SQLite format 3\x00"
SQLITE_MIN_SIZE = 512   # a database holding anything has a page, and pages are 512 bytes or more
# The files SQLite keeps beside a database (they hold its latest pages, or none).
JOURNAL_SUFFIXES = ("-wal", "-shm", "-journal")
# Folders never bound as a bot's own: the root, the system trees and all inside them...
SYSTEM_TREES = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys", "/dev",
                "/run", "/boot")
# ... and these folders themselves (folders inside them are fine: /tmp/bots/mine, /opt/mybot).
SYSTEM_ROOTS = ("/", "/tmp", "/var", "/home", "/root", "/opt", "/srv", "/mnt", "/media")
ARENA_PACKAGES = ("engine", "arena", "sample_bots")


class BotFilesError(ValueError):
    """A bot's own files that cannot be copied: too big, unreadable. One line."""


def within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _is_home(folder: Path) -> bool:
    if folder.parent == Path("/home") or folder in (Path("/root"), Path.home()):
        return True
    try:
        return any(folder == Path(entry.pw_dir) for entry in pwd.getpwall())
    except OSError:
        return False


def bindable(folder: Path) -> bool:
    """Whether ``folder`` may be bound whole: not the root, not a system tree or anything
    in one, not a top-level folder such as /tmp, not a home directory itself."""
    for path in {folder, Path(os.path.realpath(folder))}:
        if str(path) in SYSTEM_ROOTS or _is_home(path):
            return False
        if any(within(path, Path(tree)) for tree in SYSTEM_TREES):
            return False
    return True


def in_system(path: Path) -> bool:
    """A path every sandbox shows anyway: the system trees and the Python installation."""
    real = Path(os.path.realpath(path))
    return any(within(p, Path(tree)) for p in (path, real) for tree in SYSTEM_TREES) or any(
        within(p, folder) for p in (path, real) for folder in python_folders())


def python_folders() -> list[Path]:
    """The Python installation the arena runs on, so that a bot can ``import arena.sdk``:
    its prefixes and the folder of its real executable, and the package folders of
    ``engine``, ``arena`` and ``sample_bots`` (for an editable install they are in the
    checkout, which is not bound: it may hold a database)."""
    folders = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix),
               Path(os.path.realpath(sys.executable)).parent]
    return [folder for folder in [*folders, *package_folders()] if bindable(folder)]


def package_folders() -> list[Path]:
    """The folders of the arena's own packages (public: every bot may read them)."""
    folders: list[Path] = []
    for package in ARENA_PACKAGES:
        spec = importlib.util.find_spec(package)
        folders += [Path(location) for location in (spec.submodule_search_locations or [])] if spec else []
    return folders


def find_bot_files(argv: list[str], cwd: Path | None) -> BotFiles:
    """What of the disk the command ``argv``, given in ``cwd``, names (see the module's
    rule). An interpreter named by its name (``node``, ``python3``) is found on PATH and
    is not the program; nor is a path in the system trees or the Python installation."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    program: Path | None = None
    data: list[Path] = []
    for index, arg in enumerate(argv):
        if not arg or arg.startswith("-") or (index == 0 and "/" not in arg):
            continue
        path = Path(os.path.abspath(base / arg))
        try:
            if not path.exists() or in_system(path):
                continue
        except OSError:      # a name too long, say
            continue
        if program is None:
            program = path
        elif path not in data:
            data.append(path)
    if program is None:
        return BotFiles(None, data=tuple(data))
    if program.is_dir():
        folder = program
    else:
        folder = program.parent
    reason = shared_because(folder, base)
    if reason is None:
        return BotFiles(program, folder, tuple(p for p in data if not within(p, folder)))
    if program.is_dir():
        return BotFiles(None, data=(program, *data), shared_because=reason)
    return BotFiles(program, None, tuple(data), reason)


def shared_because(folder: Path, cwd: Path) -> str | None:
    """Why ``folder`` is not a bot's own (None: it is)."""
    if not bindable(folder):
        return "it is a home, top-level or system folder"
    if within(Path(os.path.abspath(cwd)), folder):
        return "it is the folder the command runs in" if Path(os.path.abspath(cwd)) == folder else \
            "the command runs inside it"
    untouchable = open_files()
    for path, kind in _walk(folder):
        name = path.name
        if kind == "dir" and name == LOGS_FOLDER:
            return f"it holds the arena's logs ({path})"
        if kind == "file" and (name in SECRET_NAMES or name.endswith(SECRET_SUFFIXES)):
            return f"it holds {path.name}, which may be a secret"
        if kind == "file" and (name.endswith(JOURNAL_SUFFIXES) or _untouched(path, untouchable)):
            return f"it holds a database ({path})"
    return None


def is_sqlite(path: Path, untouchable: Collection[tuple[int, int]] = ()) -> bool:
    """Whether ``path`` is an SQLite database, by its first bytes. Never opens a file in
    ``untouchable`` (device and inode; see :func:`open_files`): closing any descriptor of a
    file drops every POSIX lock this process holds on it, SQLite's own included."""
    try:
        info = path.stat()
        if info.st_size < SQLITE_MIN_SIZE or (info.st_dev, info.st_ino) in untouchable:
            return False
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def file_key(path: Path) -> tuple[int, int] | None:
    """``path``'s device and inode, or None."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def open_files() -> set[tuple[int, int]]:
    """The files this process has open (device and inode), where ``/proc`` tells: the
    arena's own database among them, which it must never open and close again."""
    keys: set[tuple[int, int]] = set()
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return keys
    for fd in descriptors:
        key = file_key(Path("/proc/self/fd", fd))
        if key is not None:
            keys.add(key)
    return keys


def _untouched(path: Path, untouchable: Collection[tuple[int, int]]) -> bool:
    """A file to leave alone: an SQLite journal, a file this process holds open, a database."""
    return path.name.endswith(JOURNAL_SUFFIXES) or file_key(path) in untouchable or is_sqlite(path, untouchable)


def _walk(folder: Path, limit: int = MAX_FILES * 2, into_logs: bool = True) -> list[tuple[Path, str]]:
    """Every entry under ``folder`` (links not followed), but :data:`SKIPPED` (and with
    ``into_logs`` false, the ``arena-logs`` folders): (path, ``"dir"``, ``"file"``,
    ``"link"`` or ``"other"``), parents before their children, at most ``limit`` entries."""
    found: list[tuple[Path, str]] = []
    todo = [folder]
    while todo and len(found) < limit:
        current = todo.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name in SKIPPED or (not into_logs and entry.name == LOGS_FOLDER):
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                found.append((path, "link"))
            elif entry.is_dir(follow_symlinks=False):
                found.append((path, "dir"))
                todo.append(path)
            elif entry.is_file(follow_symlinks=False):
                found.append((path, "file"))
            else:
                found.append((path, "other"))
    return found


def copy_own_files(files: BotFiles, dest: Path | None, hidden: Collection[Path] = (),
                   max_bytes: int = MAX_BYTES) -> CodeStamp:
    """Copy the bot's own files (its folder, or its program alone) to ``dest`` (None: only
    stamp them), as plain files and folders any uid may read (``0644``, ``0755`` when
    executable; links kept as links, never followed), leaving out :data:`SKIPPED`, every
    SQLite file with its journals, any file this process has open (the arena's database),
    ``arena-logs`` folders, and ``hidden`` (other bots' programs). The
    stamp covers what was read, whether copied or hidden. BotFilesError past
    ``max_bytes`` or :data:`MAX_FILES`, or for a file it cannot read.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()); (root / "bot").mkdir(mode=0o700)
    >>> _ = (root / "bot" / "main.py").write_text("print('hi')")
    >>> files = BotFiles(root / "bot" / "main.py", root / "bot")
    >>> stamp = copy_own_files(files, root / "copy")
    >>> stamp.files, oct((root / "copy").stat().st_mode & 0o777), (root / "copy" / "main.py").read_text()
    (1, '0o755', "print('hi')")
    >>> copy_own_files(files, None) == stamp
    True
    """
    own = files.own
    if own is None:
        return CodeStamp(hashlib.sha256().hexdigest(), 0, 0)
    real_hidden = {Path(os.path.realpath(path)) for path in hidden}
    untouchable = open_files()
    digest = hashlib.sha256()
    count = size = 0
    if files.folder is None:
        entries = [(own, "file")]
        root = own.parent
    else:
        entries = _walk(own, MAX_FILES + 1, into_logs=False)
        root = own
        if dest is not None:
            dest.mkdir(mode=0o755, parents=True)
            dest.chmod(0o755)
    for path, kind in entries:
        relative = path.relative_to(root)
        target = (dest / relative if files.folder is not None else dest) if dest is not None else None
        if kind == "dir":
            if target is not None:
                target.mkdir(mode=0o755)
                target.chmod(0o755)
            continue
        if kind == "link":
            link = os.readlink(path)
            digest.update(f"link {relative}\0{link}\0".encode())
            if target is not None:
                os.symlink(link, target)
            continue
        if kind != "file" or _untouched(path, untouchable):
            continue
        count += 1
        if count > MAX_FILES:
            raise BotFilesError(f"{own} holds more than {MAX_FILES} files")
        try:
            info = path.stat()
            size += info.st_size
            if size > max_bytes:
                raise BotFilesError(f"{own} holds more than {max_bytes // MIB} MiB")
            content = path.read_bytes()
        except OSError as error:
            raise BotFilesError(f"cannot read {path}: {error.strerror or error}") from None
        executable = bool(info.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
        digest.update(f"file {relative}\0{'x' if executable else '-'}\0".encode())
        digest.update(hashlib.sha256(content).digest())
        if target is None or Path(os.path.realpath(path)) in real_hidden:
            continue
        target.write_bytes(content)
        target.chmod(0o755 if executable else 0o644)
    return CodeStamp(digest.hexdigest(), count, size)
