"""Card logic shared by the sample bots: card codes, trick winners, win chances, choices.

Everything here works on what a bot receives over the wire (card codes such as
``"b7"``, ``"W1"``, ``"r15"`` and the observation dict), never on engine internals,
so it doubles as an example of reading the protocol. The variants' facts (suits,
decks, the fixed trump) come from their records, ``engine.variant(name)``.

The bots are deliberately simple *estimators*: each card in hand gets a chance of
winning a trick, the chances add up to a distribution of tricks, and bids/predictions
pick the value with the best expected score under that distribution. Play then steers
towards the bid: win cheaply while tricks are still needed, duck otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from engine import variant

COLOUR_OF_LETTER = {"b": "blue", "g": "green", "r": "red", "y": "yellow", "p": "purple"}
EXTREME = variant("extreme")
EXTREME_COLOURS = EXTREME.suits
EXTREME_TRUMP = EXTREME.trump      # red, always
# Ranks in the Wizard Extreme deck by number of players (45 / 60 / 75 cards).
EXTREME_MAX_RANK = {players: EXTREME.top_rank(players) for players in EXTREME.players}


# ---------------------------------------------------------------- cards


@dataclass(frozen=True)
class Card:
    """A parsed card code. Wizards and Jesters have no suit and rank 0."""

    code: str
    suit: str | None
    rank: int

    @property
    def is_wizard(self) -> bool:
        return self.code[0] == "W"

    @property
    def is_jester(self) -> bool:
        return self.code[0] == "J"


@cache
def card(code: str) -> Card:
    """Parse a card code (cached: the bots call this on every card of every decision)."""
    if code[0] in "WJ":
        return Card(code, None, 0)
    return Card(code, COLOUR_OF_LETTER[code[0]], int(code[1:]))


def unseen_cards(obs: Mapping[str, Any]) -> set[str]:
    """Cards this seat has not seen this round: in other hands or (classic) undealt."""
    deck = variant(obs["variant"]).deck(obs["players"])
    seen = set(obs["hand"]) | set(obs["played"])
    if obs.get("trump_card"):
        seen.add(obs["trump_card"])
    return set(deck) - seen


# ---------------------------------------------------------------- who wins a trick


def classic_lead_suit(codes: Sequence[str]) -> str | None:
    """The lead suit: the first numbered card's suit, unless a Wizard came before it."""
    for code in codes:
        c = card(code)
        if c.is_wizard:
            return None
        if not c.is_jester:
            return c.suit
    return None


def classic_winner(codes: Sequence[str], trump: str | None) -> int:
    """Index of the card that wins (so far) in a classic trick, in play order."""
    lead = classic_lead_suit(codes)
    best, best_key = 0, -1
    for i, code in enumerate(codes):
        c = card(code)
        if c.is_wizard:
            return i  # the first Wizard wins outright
        if c.is_jester:
            key = 0
        elif c.suit == trump:
            key = 200 + c.rank
        elif c.suit == lead:
            key = 100 + c.rank
        else:
            key = 0
        if key > best_key:  # strict: of equal keys (only Jesters/off-suit), the first stays
            best, best_key = i, key
    return best


def extreme_winner(codes: Sequence[str]) -> int:
    """Index of the card that wins (so far) in a Wizard Extreme trick: highest red, else
    highest of the lead colour."""
    lead = card(codes[0]).suit
    best, best_key = 0, -1
    for i, code in enumerate(codes):
        c = card(code)
        key = 100 + c.rank if c.suit == EXTREME_TRUMP else c.rank if c.suit == lead else -1
        if key > best_key:
            best, best_key = i, key
    return best


def winner(obs: Mapping[str, Any], codes: Sequence[str]) -> int:
    if obs["variant"] == "classic":
        return classic_winner(codes, obs["trump"])
    return extreme_winner(codes)


def trick_codes(obs: Mapping[str, Any]) -> list[str]:
    return [entry["card"] for entry in obs["trick"]]


def wins_now(obs: Mapping[str, Any], code: str) -> bool:
    """Would ``code`` be winning the current trick if played now?"""
    codes = trick_codes(obs) + [code]
    return winner(obs, codes) == len(codes) - 1


# ---------------------------------------------------------------- how likely a card holds


def hold_chance(obs: Mapping[str, Any], code: str, unseen: set[str]) -> float:
    """Chance that ``code``, played now and winning at that moment, is not beaten by the
    players still to play in this trick.

    A crude but serviceable model: count the unseen cards that could beat it (trumps
    only count as far as a player is likely to be void in the lead suit) and assume
    they are spread at random over the remaining players' hands.
    """
    trick = trick_codes(obs)
    codes = trick + [code]
    if winner(obs, codes) != len(codes) - 1:
        return 0.0
    remaining = obs["players"] - len(codes)
    if remaining <= 0:
        return 1.0
    c = card(code)
    classic = obs["variant"] == "classic"      # the trick's model: Wizards, Jesters, the lead after them
    trump = variant(obs["variant"]).trump or obs["trump"]   # fixed (Extreme's red), or this round's
    lead = classic_lead_suit(codes) if classic else card(codes[0]).suit
    if classic and any(card(x).is_wizard for x in codes):
        return 1.0  # a Wizard is out: the first one wins whatever comes
    if not unseen:
        return 1.0
    per_hand = max(1, len(obs["hand"]))  # later players hold as many cards as we do now
    total = len(unseen)
    wizards = sum(1 for x in unseen if x[0] == "W")
    in_lead = sum(1 for x in unseen if lead is not None and card(x).suit == lead)
    void = (1.0 - in_lead / total) ** per_hand  # chance a given player has none of the lead suit
    if c.is_jester:
        beaters = float(total - sum(1 for x in unseen if x[0] == "J"))
    elif c.suit == trump:
        beaters = wizards + sum(1 for x in unseen if card(x).suit == trump and card(x).rank > c.rank)
    else:
        higher = sum(1 for x in unseen if card(x).suit == c.suit and card(x).rank > c.rank)
        trumps = sum(1 for x in unseen if card(x).suit == trump) if trump else 0
        beaters = wizards + higher + trumps * void
    # Probability that none of remaining*per_hand random unseen cards is a beater.
    return max(0.0, 1.0 - beaters / total) ** (remaining * per_hand)


# ---------------------------------------------------------------- distributions


def trick_distribution(chances: Iterable[float]) -> list[float]:
    """P(exactly k wins) for independent per-card chances (Poisson binomial)."""
    dist = [1.0]
    for p in chances:
        nxt = [0.0] * (len(dist) + 1)
        for k, q in enumerate(dist):
            nxt[k] += q * (1 - p)
            nxt[k + 1] += q * p
        dist = nxt
    return dist


def classic_expected_score(dist: Sequence[float], bid: int) -> float:
    """Expected points of ``bid``: 20 + 10 x tricks when exact, -10 per trick off."""
    return sum(q * (20 + 10 * bid if k == bid else -10 * abs(k - bid)) for k, q in enumerate(dist))


# ---------------------------------------------------------------- classic


def classic_card_chance(c: Card, trump: str | None, players: int, hand_size: int, trumps_held: int) -> float:
    """Rough chance that one card in a fresh hand wins a trick (used for bidding).

    Hand-tuned: Wizards nearly always win; trumps by rank (long trump holdings make the
    low ones useful too); side-suit aces and kings lose value with more players and
    longer rounds, where opponents run out of the suit and trump it.
    """
    crowd = players - 3
    if c.is_wizard:
        return 0.92 - 0.03 * crowd
    if c.is_jester:
        return 0.0
    if trump is not None and c.suit == trump:
        base = {13: 0.95, 12: 0.88, 11: 0.78, 10: 0.66, 9: 0.55, 8: 0.45, 7: 0.37, 6: 0.3}.get(c.rank, 0.22)
        if trumps_held >= 3:
            base += 0.08 * (trumps_held - 2)
        return min(0.97, base) * (1 - 0.03 * crowd)
    if trump is None:
        base = {13: 0.85, 12: 0.6, 11: 0.35, 10: 0.15}.get(c.rank, 0.03)
    else:
        base = {13: 0.75, 12: 0.45, 11: 0.2, 10: 0.07}.get(c.rank, 0.02)
    return max(0.0, base - 0.07 * crowd - 0.012 * hand_size)


def classic_chances(obs: Mapping[str, Any]) -> list[float]:
    hand = [card(x) for x in obs["hand"]]
    trump = obs["trump"]
    trumps_held = sum(1 for c in hand if trump and c.suit == trump)
    return [classic_card_chance(c, trump, obs["players"], len(hand), trumps_held) for c in hand]


def classic_bid(obs: Mapping[str, Any], options: Sequence[int], shift: float = 0.0) -> int:
    """The option with the best expected score; ``shift`` moves every card's chance
    (positive: optimistic bidder, negative: cautious)."""
    chances = [min(1.0, max(0.0, p + shift)) for p in classic_chances(obs)] if shift else classic_chances(obs)
    dist = trick_distribution(chances)
    return max(options, key=lambda b: (classic_expected_score(dist, b), -b))


def classic_trump(obs: Mapping[str, Any], options: Sequence[str]) -> str:
    """The suit where the hand is longest and strongest (each card counts 10 + rank)."""
    strength = {suit: 0 for suit in options}
    for code in obs["hand"]:
        c = card(code)
        if c.suit in strength:
            strength[c.suit] += 10 + c.rank
    return max(options, key=lambda s: strength[s])


def danger(c: Card, trump: str | None) -> float:
    """How likely a card is to win later: the order in which to get rid of cards when ducking."""
    if c.is_wizard:
        return 100.0
    if c.is_jester:
        return 0.0
    return (50.0 if c.suit == trump else 0.0) + c.rank


def classic_needs(obs: Mapping[str, Any]) -> int | None:
    """Tricks still wanted this round (negative: too many already); None if our bid is unknown."""
    seat = obs["seat"]
    bid = obs["bids"][seat]
    if bid is None:
        return None
    return bid - obs["tricks_won"][seat]


def play_to_target(obs: Mapping[str, Any], options: Sequence[str], want_win: bool, *,
                   eager: bool = False, threshold: float = 0.55) -> str:
    """Play one card, trying to win the trick (``want_win``) or to lose it.

    Winning: the cheapest card that is likely to hold (chance >= ``threshold``);
    ``eager`` plays the surest card instead. Losing: the most dangerous card that
    does not win, or, when every card would win, the least dangerous one (the
    players after us may still take it); as the last player, the biggest one.
    """
    trump = variant(obs["variant"]).trump or obs["trump"]
    unseen = unseen_cards(obs)
    last = len(obs["trick"]) == obs["players"] - 1
    chances = {code: hold_chance(obs, code, unseen) for code in options}
    by_danger = sorted(options, key=lambda x: danger(card(x), trump))
    if want_win:
        good = [x for x in options if chances[x] >= threshold]
        if good:
            if eager:
                return max(good, key=lambda x: (chances[x], danger(card(x), trump)))
            return min(good, key=lambda x: danger(card(x), trump))
        best = max(options, key=lambda x: chances[x])
        if chances[best] > 0.25:
            return best
        return by_danger[0]  # cannot win: throw the least useful card
    losing = [x for x in options if chances[x] == 0.0]
    if losing:
        return max(losing, key=lambda x: danger(card(x), trump))
    return by_danger[-1] if last else min(options, key=lambda x: chances[x])


def classic_play(obs: Mapping[str, Any], options: Sequence[str], *, eager: bool = False,
                 threshold: float = 0.55) -> str:
    needs = classic_needs(obs)
    want = needs is None or needs > 0
    return play_to_target(obs, options, want, eager=eager, threshold=threshold)


# ---------------------------------------------------------------- extreme


def extreme_card_chance(c: Card, hand: Sequence[Card], players: int) -> float:
    """Rough chance that one card of a fresh 15-card hand wins a trick.

    Only cards near the top of their colour win: count the higher cards of the colour
    held by others. Red (trump) cards keep their value; a non-red card loses some when
    the hand is long in the colour (others run out of it early and trump with red).
    """
    top = EXTREME_MAX_RANK.get(players, 15)
    mine = {x.rank for x in hand if x.suit == c.suit}
    higher_elsewhere = sum(1 for r in range(c.rank + 1, top + 1) if r not in mine)
    if c.suit == EXTREME_TRUMP:
        return max(0.03, 0.97 - 0.3 * higher_elsewhere)
    base = {0: 0.8, 1: 0.42, 2: 0.12}.get(higher_elsewhere, 0.02)
    if len(mine) >= 5:
        base *= 0.7
    return base * (1 - 0.05 * (players - 3))


def extreme_colour_chances(obs: Mapping[str, Any]) -> dict[str, list[float]]:
    """Per colour, the win chances of our cards of that colour."""
    hand = [card(x) for x in obs["hand"]]
    out: dict[str, list[float]] = {colour: [] for colour in EXTREME_COLOURS}
    for c in hand:
        out[c.suit or "red"].append(extreme_card_chance(c, hand, obs["players"]))
    return out


def token_cost(dist: Sequence[float], k: int) -> float:
    """Expected penalty of taking ``k`` tokens for a colour: 2 per unused token, 3 (a
    black token) per trick won without one."""
    return sum(q * (2 * (k - t) if t < k else 3 * (t - k)) for t, q in enumerate(dist))


@dataclass(frozen=True)
class PredictionPlan:
    """What a prediction would cost: the tokens to take and the expected penalty."""

    tokens: dict[str, int]
    expected_penalty: float


def plan_tokens(obs: Mapping[str, Any], shift: float = 0.0) -> PredictionPlan:
    """The cheapest tokens per colour, taken only from the supply (always legal)."""
    supply = obs.get("supply") or {}
    tokens: dict[str, int] = {}
    penalty = 0.0
    for colour, chances in extreme_colour_chances(obs).items():
        if shift:
            chances = [min(1.0, max(0.0, p + shift)) for p in chances]
        dist = trick_distribution(chances)
        limit = min(int(supply.get(colour, 0)), len(chances))
        best = min(range(limit + 1), key=lambda k: (token_cost(dist, k), k))
        penalty += token_cost(dist, best)
        if best:
            tokens[colour] = best
    return PredictionPlan(tokens, penalty)


def extreme_predict(obs: Mapping[str, Any], *, shift: float = 0.0,
                    destroyer_margin: float | None = -2.0) -> dict[str, Any]:
    """Tokens for the expected wins, or the destroyer when predicting looks costlier than
    the destroyer's fixed penalty (less the black tokens others will probably take) plus
    ``destroyer_margin``; ``None`` never takes it.

    The default margin is strongly negative on purpose: in games between the sample
    bots, taking the destroyer unless the hand is very predictable (expected penalty
    under about 1) scored clearly best; with the default destroyer penalty of 4 the
    destroyer is simply a good deal.
    """
    plan = plan_tokens(obs, shift)
    if obs.get("destroyer_free") and destroyer_margin is not None:
        destroyer_cost = obs.get("destroyer_penalty", 4) - 1.0
        if plan.expected_penalty > destroyer_cost + destroyer_margin:
            return {"destroyer": True}
    return {"tokens": plan.tokens}


def extreme_can_pay(obs: Mapping[str, Any], lead: str | None, code: str) -> bool:
    """Could we pay a token (without taking a black one) if ``code`` won this trick?"""
    held = obs["tokens"][obs["seat"]]
    c = card(code)
    lead = lead or c.suit
    if held.get("white", 0) or held.get(lead, 0):
        return True
    return c.suit == EXTREME_TRUMP and bool(held.get(EXTREME_TRUMP, 0))


def extreme_play(obs: Mapping[str, Any], options: Sequence[str], *, eager: bool = False) -> str:
    """Win the tricks we hold tokens for; lose the others. The destroyer always ducks, so
    that others win (and perhaps take black tokens, which lower its penalty)."""
    if obs.get("destroyer") == obs["seat"]:
        return play_to_target(obs, options, want_win=False)
    lead = obs.get("lead_suit")
    payable = [x for x in options if extreme_can_pay(obs, lead, x)]
    if lead is None:
        # Leading: lead a likely winner we can pay for, else our most harmless card.
        unseen = unseen_cards(obs)
        chances = {x: hold_chance(obs, x, unseen) for x in payable}
        good = [x for x in payable if chances[x] >= (0.4 if eager else 0.6)]
        if good:
            return max(good, key=lambda x: (chances[x], -card(x).rank))
        return play_to_target(obs, options, want_win=False)
    if payable and any(wins_now(obs, x) for x in payable):
        # Keep the choice to the payable cards, so the card that wins is one we can pay for.
        return play_to_target(obs, payable, want_win=True, eager=eager, threshold=0.5)
    return play_to_target(obs, options, want_win=False)


def extreme_pay(obs: Mapping[str, Any], options: Sequence[str]) -> str:
    """Return the token we are least likely to need: the colour whose tokens most exceed
    the wins our remaining hand promises. White tokens cost 4 when kept, so they go
    first unless a colour is clearly in surplus."""
    held = obs["tokens"][obs["seat"]]
    chances = extreme_colour_chances(obs)
    surplus = {colour: held.get(colour, 0) - sum(chances.get(colour, [])) for colour in options}
    if "white" in surplus:
        surplus["white"] = 0.75
    return max(options, key=lambda x: surplus[x])
