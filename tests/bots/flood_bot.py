"""The flooding bot of ``arena bench flood`` (``arena/bench/flooder.py``) as a test bot: it
plays legally while 16 threads hammer the referee's public calls and open Play streams
with made-up tokens, through the address it was given."""

from arena.bench.flooder import main

if __name__ == "__main__":
    main()
