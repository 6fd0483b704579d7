"""The search bot's playouts: a round played to its end in one sampled world, fast.

The policy is the heuristic bot's idea in a few integer operations: while a seat still
wants tricks (classic: tricks < bid; Extreme: it can pay a token for this trick) it plays
its surest winner (the cheapest one when it plays last), otherwise it ducks with its most
dangerous losing card; the Extreme destroyer always ducks. Hands are ``int`` bit masks and
cards ``int`` indices (:mod:`engine.classic_cards`, :mod:`engine.extreme_cards`).

A classic round's end is valued by :func:`classic_outcome` (about places, since ratings
come from places); an Extreme one by the seat's penalty, which :func:`extreme_playout`
returns. :mod:`sample_bots.search_bot` calls them for every candidate in every world.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine import classic_cards as cc
from engine import extreme_cards as xc
from engine.masks import cards_of
from sample_bots import strategy

PLACE_SCALE_LAST = 10.0   # classic points: how soft "finishing above" is after the last round
PLACE_SCALE_ROUND = 15.0  # ... growing with the square root of the rounds still to come

# ---------------------------------------------------------------- classic tables

_C_WIZ, _C_JES = cc.WIZARD, cc.JESTER
_C_SUIT = cc.SUIT_OF
_C_RANK = cc.RANK_OF
_C_SUIT_MASKS = cc.SUIT_MASKS
_C_SPECIAL = cc.SPECIAL_MASK


def _classic_danger(trump: int) -> tuple[int, ...]:
    """How likely each card is to win later: the order to keep or shed cards in."""
    out = []
    for c in range(cc.NUM_CARDS):
        suit = _C_SUIT[c]
        out.append(100 if suit == _C_WIZ else 0 if suit == _C_JES else (50 if suit == trump else 0) + _C_RANK[c])
    return tuple(out)


_C_DANGER = {t: _classic_danger(t) for t in range(-1, 4)}



def classic_playout(hands: list[int], trump: int, bids: Sequence[int], tricks: Sequence[int], leader: int,
                    trick: Sequence[int], players: int) -> list[int]:
    """Play the round to its end with the greedy policy; returns the tricks won per seat.

    ``trick``: the cards of the trick in progress, led by ``leader``. ``hands`` is copied.

    >>> I = cc.INDEX
    >>> classic_playout([1 << I["W1"], 1 << I["b2"], 1 << I["b9"]], 2, [1, 0, 0], [0, 0, 0], 0, [], 3)
    [1, 0, 0]
    """
    hands = list(hands)
    tricks = list(tricks)
    danger = _C_DANGER[trump]
    cards = list(trick)
    # The trick in progress so far: lead suit (-1: none yet), freed by a Wizard, best strength.
    lead, freed, best, best_pos = -1, False, -1, 0
    for i, c in enumerate(cards):
        lead, freed, best, best_pos = _classic_step(c, i, lead, freed, best, best_pos, trump)
    seat = (leader + len(cards)) % players
    while hands[seat]:
        hand = hands[seat]
        follow = hand & _C_SUIT_MASKS[lead] if lead >= 0 else 0
        legal = follow | (hand & _C_SPECIAL) if follow else hand
        want = bids[seat] > tricks[seat]
        last = len(cards) == players - 1
        options = cards_of(legal)
        if len(options) == 1:
            pick = options[0]
        elif not cards:
            # Leading: the surest card while tricks are wanted, else the most harmless.
            pick = max(options, key=danger.__getitem__) if want else min(options, key=danger.__getitem__)
        else:
            win_best, win_c, lose_best, lose_c, low_c, low_d = -1, -1, -1, -1, -1, 1000
            for c in options:
                suit = _C_SUIT[c]
                if freed:
                    s = -1
                elif suit == _C_WIZ:
                    s = 300
                elif suit == _C_JES:
                    s = 0
                else:
                    lead_now = lead if lead >= 0 else suit
                    s = 200 + _C_RANK[c] if suit == trump else 100 + _C_RANK[c] if suit == lead_now else 0
                d = danger[c]
                if s > best:
                    # A winner: while wanting, the surest (last to play: the cheapest).
                    key = -d if last else d
                    if key > win_best:
                        win_best, win_c = key, c
                elif d > lose_best:
                    lose_best, lose_c = d, c
                if d < low_d:
                    low_d, low_c = d, c
            if want:
                pick = win_c if win_c >= 0 else low_c
            elif lose_c >= 0:
                pick = lose_c
            else:  # every card wins: the last player sheds its biggest, others their smallest
                pick = max(options, key=danger.__getitem__) if last else low_c
        hands[seat] = hand ^ (1 << pick)
        lead, freed, best, best_pos = _classic_step(pick, len(cards), lead, freed, best, best_pos, trump)
        cards.append(pick)
        if len(cards) == players:
            leader = (leader + best_pos) % players
            tricks[leader] += 1
            cards = []
            lead, freed, best, best_pos = -1, False, -1, 0
            seat = leader
        else:
            seat = (seat + 1) % players
    return tricks


def _classic_step(c: int, pos: int, lead: int, freed: bool, best: int, best_pos: int,
                  trump: int) -> tuple[int, bool, int, int]:
    """The trick state after card ``c`` is played at position ``pos``."""
    suit = _C_SUIT[c]
    if freed:
        return lead, freed, best, best_pos
    if suit == _C_WIZ:
        return lead, lead < 0, 300, pos  # a Wizard before any numbered card frees the trick
    if suit == _C_JES:
        s = 0
    else:
        if lead < 0:
            lead = suit
        s = 200 + _C_RANK[c] if suit == trump else 100 + _C_RANK[c] if suit == lead else 0
    if s > best:
        return lead, freed, s, pos
    return lead, freed, best, best_pos


def _classic_score(bid: int, tricks: int) -> int:
    return 20 + 10 * tricks if bid == tricks else -10 * abs(bid - tricks)


def classic_outcome(obs: Mapping[str, Any]) -> Callable[[Sequence[int], Sequence[int]], float]:
    """How good a round's end (every seat's bid and tricks) is for the observing seat.

    The ratings come from places, so: the sum over the others of a smooth "I finish above
    them", tanh of the game-total difference after this round over the spread the rounds
    still to come may add (nearly a step in the last round, nearly linear early on).
    """
    me, players = obs["seat"], obs["players"]
    others = [s for s in range(players) if s != me]
    totals = obs.get("scores") or [0] * players
    left = max(0, obs.get("rounds", obs["round"]) - obs["round"])
    scale = PLACE_SCALE_LAST + PLACE_SCALE_ROUND * left ** 0.5
    tanh = math.tanh

    def pairwise(bids: Sequence[int], won: Sequence[int]) -> float:
        mine = totals[me] + _classic_score(bids[me], won[me])
        out = 0.0
        for s in others:
            out += tanh((mine - totals[s] - _classic_score(bids[s], won[s])) / scale)
        return 10 * out + 0.01 * mine
    return pairwise


def guess_classic_bid(hand: int, trump: int, players: int) -> int:
    """What a sensible opponent bids with this hand: the heuristic's bid (the best expected
    score under its per-card chances)."""
    trump_name = cc.SUITS[trump] if trump >= 0 else None
    codes = list(cc.codes_of(hand))
    return strategy.classic_bid({"hand": codes, "trump": trump_name, "players": players}, range(len(codes) + 1))


# ---------------------------------------------------------------- extreme

_X_COLOUR = xc.COLOUR_OF
_X_MASKS = xc.COLOUR_MASKS
_WHITE, _BLACK, _RED = xc.WHITE, xc.BLACK, xc.RED
_X_PENALTY = xc.TOKEN_PENALTY


def extreme_playout(hands: list[int], tokens: list[list[int]], supply: list[int], destroyer: int | None,
                    black_taken: int, leader: int, trick: Sequence[int], players: int, base: int,
                    me: int) -> int:
    """Play the round to its end with the greedy policy; returns ``me``'s penalty.

    ``trick``: the cards of the trick in progress, led by ``leader``. Nothing passed in is changed.

    >>> I = xc.INDEX
    >>> none = [0] * 7
    >>> extreme_playout([1 << I["r9"], 1 << I["b2"], 1 << I["b9"]], [[1, 0, 0, 0, 0, 0, 0], none[:], none[:]],
    ...                 [4, 3, 3, 3, 3, 4, 6], None, 0, 0, [], 3, 4, 0)
    0
    """
    hands = list(hands)
    tokens = [list(t) for t in tokens]
    supply = list(supply)
    cards = list(trick)
    seat = (leader + len(cards)) % players
    while hands[seat]:
        hand = hands[seat]
        lead = _X_COLOUR[cards[0]] if cards else -1
        legal = (hand & _X_MASKS[lead]) or hand if lead >= 0 else hand
        held = tokens[seat]
        if not cards:
            pick = _extreme_lead(legal, held, seat == destroyer)
        else:
            best_key = max(1000 + c if _X_COLOUR[c] == _RED else c if _X_COLOUR[c] == lead else -1 for c in cards)
            last = len(cards) == players - 1
            win_c, win_k, lose_c, lose_k, low_c, low_k = -1, -1, -1, -1, -1, 10_000
            for c in cards_of(legal):
                colour = _X_COLOUR[c]
                key = 1000 + c if colour == _RED else c if colour == lead else -1
                if key > best_key:
                    payable = seat != destroyer and (held[lead] or held[_WHITE] or (colour == _RED and held[_RED]))
                    if payable:
                        k = -key if last else key
                        if k > win_k:
                            win_k, win_c = k, c
                    if key < low_k:
                        low_k, low_c = key, c
                else:
                    # Shed high cards while ducking (reds last: they win later tricks).
                    k = c % 15 + (20 if colour == _RED else 0)
                    if k > lose_k:
                        lose_k, lose_c = k, c
            pick = win_c if win_c >= 0 else lose_c if lose_c >= 0 else low_c
        hands[seat] = hand ^ (1 << pick)
        cards.append(pick)
        if len(cards) < players:
            seat = (seat + 1) % players
            continue
        lead = _X_COLOUR[cards[0]]
        keys = [1000 + c if _X_COLOUR[c] == _RED else c if _X_COLOUR[c] == lead else -1 for c in cards]
        pos = keys.index(max(keys))
        winner = (leader + pos) % players
        if winner != destroyer:
            held = tokens[winner]
            won_red = _X_COLOUR[cards[pos]] == _RED
            if held[_WHITE]:  # a white one costs 4 when kept: return it first
                colour = _WHITE
            elif held[lead]:
                colour = lead
            elif won_red and held[_RED]:
                colour = _RED
            else:
                colour = -1
            if colour >= 0:
                held[colour] -= 1
                supply[colour] += 1
            elif supply[_BLACK]:
                supply[_BLACK] -= 1
                held[_BLACK] += 1
                black_taken += 1
        leader = seat = winner
        cards = []
    if me == destroyer:
        return max(0, base - black_taken)
    return sum(n * _X_PENALTY[c] for c, n in enumerate(tokens[me]))


def _extreme_lead(legal: int, held: list[int], is_destroyer: bool) -> int:
    """Lead the top card of a colour we hold tokens for; otherwise our lowest card."""
    best_c, best_k = -1, -1
    low_c, low_k = -1, 10_000
    for c in cards_of(legal):
        colour = _X_COLOUR[c]
        rank = c % 15
        if not is_destroyer and held[colour] and rank + 100 * held[colour] > best_k:
            best_c, best_k = c, rank + 100 * held[colour]
        k = rank + (20 if colour == _RED else 0)
        if k < low_k:
            low_c, low_k = c, k
    return best_c if best_c >= 0 else low_c
