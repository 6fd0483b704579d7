"""Policy-based inference: how likely a sampled world is, given what the rivals did.

A world (every hidden hand) makes each rival's past decisions of this round more or less
likely: a rival who bid 4 of 5 tricks with no winner in its world hand would hardly have
bid so. The rival decisions of the round are rebuilt as the rival saw them then, its own
hand aside (:func:`classic_rival_decisions`, :func:`extreme_rival_decisions`), and
:meth:`Evidence.log_weights` scores worlds by the log-probability the learned policy gives
each action taken with the world's hand in the rival's place. The search bot then averages
its worlds' values by these weights (Rebstock et al., "Policy Based Inference in
Trick-Taking Card Games", 2019, weighed worlds so for Skat).

What is used, where the rival's view is known exactly:

* classic, open bidding: every bid and card of the round; hidden bidding: the cards (a
  bid is made blind, before the others are shown); secret bidding: nothing (the rivals'
  bids stay hidden from the observer, so their view of their own cannot be rebuilt);
* Wizard Extreme: every card of the tricks the observer has seen in play (their tokens
  are those of the observer's own view during that trick: tokens move only between
  tricks), and every prediction step while no white token has been exchanged (then each
  seat's tokens are its prediction).

The probabilities are mixed with a uniform choice (:data:`MIX`): the rivals are not the
policy, and one unlikely-looking card should not rule a world out (the search bot tempers
the weights further, :func:`sample_bots.search_worlds.temper`). Of the cards, the
:data:`RECENT_CARDS` most recent are weighed: each decision weighed costs a network pass
in every world (24 decisions: about 0.09 ms a world here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.wire.encoding import NO_PENDING, Pending, action_layout, encode_sparse, legal_indices, observation_layout
from engine import Prediction, variant
from engine import classic_cards as cc
from engine import extreme_cards as xc
from engine.classic import lead_suit, trick_winner
from engine.extreme import trick_winner as extreme_trick_winner
from sample_bots.learned.policy import Floats, Policy, padded_index
from sample_bots.learned.steps import prediction_steps

MIX = 0.1           # the share of a uniform choice among the legal actions
RECENT_CARDS = 24   # the rivals' cards weighed: the most recent ones (each costs time in every world)

Views = Mapping[int, Mapping[str, Any]]
"""The observer's own observations of this round's tricks in play, by trick (0 the first):
what Wizard Extreme's rebuilt views take their tokens from."""


@dataclass(frozen=True)
class RivalDecision:
    """One decision a rival took this round, as it saw it (its hand aside).

    ``template`` is its observation with an empty hand (and ``pending``, a prediction's
    steps so far); ``later`` the cards (a mask) it played from this decision on, which
    were in its hand then. A card's legal set depends on the hand: ``follow`` is the lead
    colour's mask when there was one (classic's Wizards and Jesters may always be
    played); any other decision's ``legal`` actions are fixed.
    """

    seat: int
    template: Mapping[str, Any]
    later: int
    action: int
    pending: Pending = NO_PENDING
    follow: int | None = None
    legal: tuple[int, ...] = ()

    @property
    def is_card(self) -> bool:
        return not self.legal


def _classic_order(obs: Mapping[str, Any]) -> list[tuple[int, int]]:
    """This round's cards as ``(seat, card)`` in play order, rebuilt from ``played`` (play
    order), the first leader (left of the dealer) and each complete trick's winner."""
    p = obs["players"]
    trump = cc.SUITS.index(obs["trump"]) if obs["trump"] else cc.NO_SUIT
    cards = [cc.INDEX[c] for c in obs["played"]]
    leader = (obs["dealer"] + 1) % p
    out: list[tuple[int, int]] = []
    for start in range(0, len(cards), p):
        trick = cards[start:start + p]
        out += [((leader + i) % p, c) for i, c in enumerate(trick)]
        if len(trick) == p:
            leader = (leader + trick_winner(trick, trump)) % p
    return out


def classic_rival_decisions(obs: Mapping[str, Any]) -> list[RivalDecision]:
    """Every decision a rival of the observer took this round whose view is known.

    The templates are what ``game.observe(rival)`` showed it then, less its hand (the
    tests compare them with the engine's own observations).
    """
    if obs["bidding"] == "secret" or obs["phase"] not in ("bid", "play"):
        return []
    p, me = obs["players"], obs["seat"]
    slices = action_layout("classic").slices
    bids = obs["bids"]
    first = (obs["dealer"] + 1) % p
    base = {key: obs[key] for key in ("variant", "players", "round", "rounds", "hand_size", "dealer",
                                      "trump_card", "trump", "bidding", "plus_minus_one", "scores")}
    order = _classic_order(obs)
    out: list[RivalDecision] = []
    if obs["bidding"] == "open":
        for i in range(p):
            seat = (first + i) % p
            if seat == me or bids[seat] is None:
                continue
            seen = [bids[s] if (s - first) % p < i else None for s in range(p)]
            template = {**base, "seat": seat, "phase": "bid", "decision": "bid", "hand": [], "bids": seen,
                        "tricks_won": [0] * p, "leader": first, "lead_suit": None, "trick": [], "played": []}
            later = sum(1 << c for s, c in order if s == seat)
            options = list(range(obs["hand_size"] + 1))
            if obs["plus_minus_one"] and i == p - 1:   # the last bidder may not make the bids add up
                forbidden = obs["hand_size"] - sum(b for b in seen if b is not None)
                options = [b for b in options if b != forbidden]
            legal = tuple(legal_indices(template, options))
            out.append(RivalDecision(seat, template, later, slices["bid"].start + bids[seat], legal=legal))
    if obs["phase"] != "play":
        return out
    trump = cc.SUITS.index(obs["trump"]) if obs["trump"] else cc.NO_SUIT
    tricks = [0] * p
    leader = first
    for start in range(0, len(order), p):
        trick = order[start:start + p]
        for i, (seat, card) in enumerate(trick):
            if seat == me:
                continue
            before = [c for _, c in trick[:i]]
            lead = lead_suit(before) if before else cc.NO_SUIT
            template = {**base, "seat": seat, "phase": "play", "decision": "play", "hand": [],
                        "bids": list(bids), "tricks_won": list(tricks), "leader": leader,
                        "lead_suit": cc.suit_name(lead) if before else None,
                        "trick": [{"seat": s, "card": cc.CODES[c]} for s, c in trick[:i]],
                        "played": [cc.CODES[c] for _, c in order[:start + i]]}
            later = sum(1 << c for s, c in order[start + i:] if s == seat)
            follow = cc.SUIT_MASKS[lead] if lead >= 0 else None
            out.append(RivalDecision(seat, template, later, slices["card"].start + card, follow=follow))
        if len(trick) == p:
            leader = (leader + trick_winner([c for _, c in trick], trump)) % p
            tricks[leader] += 1
    return out


def _extreme_order(obs: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Wizard Extreme's :func:`_classic_order` (red is always trump)."""
    p = obs["players"]
    cards = [xc.INDEX[c] for c in obs["played"]]
    leader = (obs["dealer"] + 1) % p
    out: list[tuple[int, int]] = []
    for start in range(0, len(cards), p):
        trick = [((leader + i) % p, c) for i, c in enumerate(cards[start:start + p])]
        out += trick
        if len(trick) == p:
            leader = trick[extreme_trick_winner(trick)][0]
    return out


def extreme_rival_decisions(obs: Mapping[str, Any], views: Views) -> list[RivalDecision]:
    """Every decision a rival of the observer took this round whose view is known
    (Wizard Extreme; ``views``, the observer's own observations of the round's tricks)."""
    if obs["phase"] not in ("predict", "play"):
        return []
    p, me = obs["players"], obs["seat"]
    slices = action_layout("extreme").slices
    base = {key: obs[key] for key in ("variant", "players", "round", "rounds", "dealer", "trump", "scores",
                                      "destroyer_penalty")}
    first = (obs["dealer"] + 1) % p
    order = _extreme_order(obs)
    out: list[RivalDecision] = []
    # The predictions: from the view before any token moved in play (the first trick's, or
    # the prediction phase's own), while no white token has been exchanged.
    settled = obs if obs["phase"] == "predict" else views.get(0)
    if settled is not None and settled["supply"]["white"] == xc.SUPPLY_START[xc.WHITE]:
        supply = list(xc.SUPPLY_START)
        tokens = [[0] * 7 for _ in range(p)]
        destroyer: int | None = None
        for i in range(p):
            seat = (first + i) % p
            if not settled["predicted"][seat]:
                break
            held = [settled["tokens"][seat][c] for c in xc.TOKEN_COLOURS]
            took_destroyer = settled["destroyer"] == seat
            template = {**base, "seat": seat, "phase": "predict", "decision": "predict", "hand": [],
                        "tricks_won": [0] * p, "leader": first, "lead_suit": None, "trick": [], "played": [],
                        "tokens": [dict(zip(xc.TOKEN_COLOURS, t)) for t in tokens],
                        "supply": dict(zip(xc.TOKEN_COLOURS, supply)), "destroyer": destroyer,
                        "destroyer_free": destroyer is None,
                        "predicted": [(s - first) % p < i for s in range(p)], "black_taken": 0}
            if seat != me:
                prediction = (Prediction(destroyer=True) if took_destroyer
                              else Prediction(tokens={c: held[k] for k, c in enumerate(xc.COLOURS) if held[k]}))
                later = sum(1 << c for s, c in order if s == seat)
                for pending, action in prediction_steps(template, prediction):
                    legal = tuple(legal_indices(template, None, pending))
                    if action not in legal:
                        break
                    out.append(RivalDecision(seat, template, later, action, pending=pending, legal=legal))
            if took_destroyer:
                destroyer = seat
            for k in range(5):
                tokens[seat][k] += held[k]
                supply[k] -= held[k]
    if obs["phase"] != "play":
        return out
    for start in range(0, len(order), p):
        view = obs if start // p == len(obs["played"]) // p else views.get(start // p)
        if view is None:
            continue
        trick = order[start:start + p]
        leader = trick[0][0]
        for i, (seat, card) in enumerate(trick):
            if seat == me:
                continue
            lead = xc.COLOUR_OF[trick[0][1]] if i else None
            template = {**base, **{key: view[key] for key in ("tokens", "supply", "destroyer", "predicted",
                                                              "black_taken", "tricks_won")},
                        "seat": seat, "phase": "play", "decision": "play", "hand": [], "leader": leader,
                        "lead_suit": None if lead is None else xc.COLOURS[lead], "destroyer_free": False,
                        "trick": [{"seat": s, "card": xc.CODES[c]} for s, c in trick[:i]],
                        "played": [xc.CODES[c] for _, c in order[:start + i]]}
            later = sum(1 << c for s, c in order[start + i:] if s == seat)
            follow = None if lead is None else xc.COLOUR_MASKS[lead]
            out.append(RivalDecision(seat, template, later, slices["card"].start + card, follow=follow))
    return out


class Evidence:
    """The rivals' decisions of this round, ready to score worlds against.

    >>> from engine import GameConfig, new_game
    >>> game = new_game(GameConfig(players=4, seed=3, rounds=3))
    >>> while game.observe(0)["decision"] is None:
    ...     seat = game.to_act()[0]
    ...     game.apply(seat, game.legal_actions(seat)[0])
    >>> from sample_bots.learned.policy import RIVALS
    >>> evidence = Evidence(game.observe(0), Policy.load("classic", RIVALS))
    >>> len(evidence.decisions) > 0
    True
    """

    def __init__(self, obs: Mapping[str, Any], policy: Policy, views: Views | None = None) -> None:
        name, p = obs["variant"], obs["players"]
        classic = name == "classic"
        found = classic_rival_decisions(obs) if classic else extreme_rival_decisions(obs, views or {})
        cards = [d for d in found if d.is_card]
        self.decisions = [d for d in found if not d.is_card] + cards[-RECENT_CARDS:]
        self.policy = policy
        self.cards = len(variant(name).cards)
        self.card_start = action_layout(name).slices["card"].start
        self.specials = cc.SPECIAL_MASK if classic else 0
        # Each card's first-layer row in the rival's hand (zero for a card not in this table's deck).
        hand = observation_layout(name, p).slices["hand"].start
        slots = {code: i for i, code in enumerate(variant(name).deck(p))}
        rows = np.zeros((self.cards, policy.w1.shape[1]), dtype=np.float32)
        mapped = padded_index(name, p)
        for card, code in enumerate(variant(name).cards):
            if code in slots:
                rows[card] = policy.w1[mapped[hand + slots[code]]]
        self.hand_rows: Floats = rows
        pres = [policy.first_layer(p, *encode_sparse(d.template, d.pending)) for d in self.decisions]
        self.pres: Floats = np.asarray(pres, dtype=np.float32).reshape(len(pres), len(policy.b1))

    def _bits(self, masks: Sequence[int]) -> np.ndarray:
        """Card masks as rows of 0/1 (n x cards)."""
        width = (self.cards + 7) // 8
        raw = np.frombuffer(b"".join(m.to_bytes(width, "little") for m in masks), dtype=np.uint8)
        return np.unpackbits(raw.reshape(len(masks), width), axis=1, bitorder="little")[:, :self.cards]

    def log_weights(self, hands: Sequence[Sequence[int]]) -> npt.NDArray[np.float64]:
        """Each world's log-weight: the sum over the rivals' decisions of the log of the
        (tempered, mixed) probability the policy gives the action taken, with the world's
        hand in the rival's place. ``hands[w][seat]``: the world's hands as card masks."""
        n = len(hands)
        total = np.zeros(n, dtype=np.float64)
        if not self.decisions:
            return total
        held_now = {seat: self._bits([h[seat] for h in hands]) for seat in {d.seat for d in self.decisions}}
        pre_rows = []
        legal_rows: list[np.ndarray | None] = []
        for k, d in enumerate(self.decisions):
            held = held_now[d.seat] | self._bits([d.later])
            pre_rows.append(self.pres[k] + held.astype(np.float32) @ self.hand_rows)
            if d.is_card:
                legal = held.astype(bool)
                if d.follow is not None:
                    follow = legal & self._bits([d.follow]).astype(bool)
                    free = legal & self._bits([self.specials]).astype(bool)
                    legal = np.where(follow.any(axis=1)[:, None], follow | free, legal)
                legal_rows.append(legal)
            else:
                legal_rows.append(None)
        logits = self.policy.outputs(np.concatenate(pre_rows))
        for k, d in enumerate(self.decisions):
            part = logits[k * n:(k + 1) * n]
            legal_cards = legal_rows[k]
            if legal_cards is not None:
                scores = np.where(legal_cards, part[:, self.card_start:self.card_start + self.cards], -np.inf)
                chosen = d.action - self.card_start
                count = legal_cards.sum(axis=1)
            else:
                scores = part[:, list(d.legal)]
                chosen = d.legal.index(d.action)
                count = np.full(n, len(d.legal))
            odds = np.exp(scores - scores.max(axis=1, keepdims=True))
            prob = odds[:, chosen] / odds.sum(axis=1)
            total += np.log((1 - MIX) * prob + MIX / count)
        return total
