"""A bot's output goes to its log in whole lines, whoever else writes to the same log."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.tournament.lineup import copy_output


def test_two_processes_sharing_a_log_never_cut_each_others_lines(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"

    async def pump() -> None:
        streams = [asyncio.StreamReader(), asyncio.StreamReader()]
        copies = [asyncio.ensure_future(copy_output(stream, log)) for stream in streams]
        for piece in range(50):             # each line arrives in two reads, the two processes alternating
            for n, stream in enumerate(streams):
                stream.feed_data(f"process {n} line {piece} begins".encode())
                await asyncio.sleep(0)
                stream.feed_data(b" and ends\n")
                await asyncio.sleep(0)
        for stream in streams:
            stream.feed_data(b"no newline at the end")
            stream.feed_eof()
        await asyncio.gather(*copies)

    asyncio.run(pump())
    lines = log.read_bytes().split(b"\n")
    whole = [line for line in lines if line.endswith(b" and ends")]
    assert len(whole) == 100 and all(line.startswith(b"process ") and b"begins and ends" in line for line in whole)
    assert log.read_bytes().count(b"no newline at the end") == 2      # an unfinished last line is kept too


def test_the_log_stops_at_its_limit_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"

    async def pump() -> None:
        stream = asyncio.StreamReader()
        copy = asyncio.ensure_future(copy_output(stream, log, limit=1 << 20))
        for _ in range(40):
            stream.feed_data(b"x" * 50_000 + b"\n")
            await asyncio.sleep(0)
        stream.feed_eof()
        await copy

    asyncio.run(pump())
    text = log.read_bytes()
    assert len(text) < (1 << 20) + 200 and text.endswith(b"past 1 MiB is not kept]\n")
