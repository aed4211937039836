"""How the web heuristic reads a request: budgets stated every which way, unfamiliar products searched rather than
refused, and cues that rest on the request's own words. The example sentences are written here for the tests; none
comes from the shipped rewrites or from the held-out request set."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import agentabstain_gym  # noqa: F401
from agentabstain_gym.agents import make_agent
from agentabstain_gym.envs.web.custom import price_cap_in
from agentabstain_gym.envs.web.dataset import SOLVABLE, build_dataset
from agentabstain_gym.envs.web.reading import read_money, read_request
from agentabstain_gym.runner import run_episode

DATA = Path(__file__).parent / "data" / "web"


@pytest.mark.parametrize("text, cap, floor", [
    ("a desk lamp, price lower than 40.00 dollars", 40.0, None),
    ("desk lamp under $25", 25.0, None),
    ("desk lamp, $30 tops", 30.0, None),
    ("desk lamp, 30 dollars max", 30.0, None),
    ("a desk lamp for no more than $1,200.50", 1200.5, None),
    ("desk lamp, budget 45 bucks", 45.0, None),
    ("desk lamp; $60 or less", 60.0, None),
    ("desk lamp that costs at least $80 but not over $50", 50.0, 80.0),
    ("desk lamp no cheaper than $15", None, 15.0),
    ("desk lamp between $20 and $35", 35.0, 20.0),
    ("a $50 gift card holder", None, None),
    ("a desk lamp for free", 0.0, None),
])
def test_money_is_read_as_people_state_it(text: str, cap: float | None, floor: float | None) -> None:
    assert read_money(text) == (cap, floor)
    assert price_cap_in(text.upper()) == cap  # task files without a price_upper get the same cap


@pytest.mark.parametrize("text", [
    "i want a clip on ukulele tuner with a backlit display, in black, under $15",
    "aluminum tent stakes that won't bend, pack of 12, up to $18",
    "hi, could you find a cast iron tortilla press, 8 inch, below 40 dollars",
])
def test_an_unfamiliar_product_is_no_reason_to_stop(text: str) -> None:
    reading = read_request(text)
    assert reading.ptype is None and reading.cue is None and reading.phrase


@pytest.mark.parametrize("text, kind", [
    ("a ceramic vase my sister would adore, in white, under $40", "taste"),
    ("a throw pillow in a dreamy shade, 18 x 18 inch, under $25", "taste"),
    ("a scented candle that smells heavenly, 8 oz, under $20", "taste"),
    ("the same dish soap as last time, 16 fl oz, under $6", "shopper knows"),
    ("a phone case that fits my phone, in black, under $15", "shopper knows"),
    ("a tablecloth to match our dining chairs, under $30", "shopper knows"),
    ("hiking socks in my brother's size, merino wool, under $20", "shopper knows"),
    ("a candle in a peaceful scent, 8 oz, under $20", "described by taste"),
    ("something for my aunt, water resistant, under $50", "what to buy"),
    ("a vegan leather belt cut from real cowhide, under $30", "cannot both"),
    ("decaf coffee beans with a double shot of caffeine, 12 ounce, under $15", "cannot both"),
    ("a 12 inch skillet measuring 8 inches across, under $40", "measure"),
    ("a 3 liter water bottle, under half a gallon, under $20", "outside"),
    ("dish sponges, pack of 6 holding ten sponges, under $9", "pack"),
    ("a desk lamp priced above $90 and below $50", "no price"),
    ("a sugar free jam sweetened with cane sugar, 10 ounce, under $8", "sugar"),
    ("a wireless keyboard and mouse combo, minus the mouse, under $40", "asks for"),
    ("a men's leather belt for my wife, size 34, under $40", "not made for"),
    ("a 110% cotton t-shirt, size large, under $20", "no product can be"),
])
def test_cues_name_what_the_request_itself_shows(text: str, kind: str) -> None:
    cue = read_request(text).cue
    assert cue is not None and kind in cue, cue


@pytest.mark.parametrize("text", [
    "a ceramic vase, white, 10 inch, under $40",
    "a throw pillow in sage green, 18 x 18 inch, under $25",
    "a lavender scented candle, 8 oz, under $20",
    "dish soap, 16 fl oz, for my mom, under $6",
    "an iphone 14 case, in black, under $15",
    "a vegan leather belt, black, under $30",
    "decaf coffee beans, medium roast, 12 ounce, under $15",
    "a 12 inch skillet with a lid, under $40",
    "dish sponges, pack of 6, non scratch, under $9",
    "sugar free jam, no added sugar, 10 ounce, under $8",
    "a wireless keyboard and mouse combo, no numeric keypad, under $40",
    "a men's leather belt for my husband, size 34, under $40",
    "a 100% cotton t-shirt, size large, under $20",
    "a table lamp for my best friend, 2 pack, under $60",
])
def test_the_same_requests_without_the_problem_raise_no_cue(text: str) -> None:
    assert read_request(text).cue is None


def test_no_shipped_original_gives_a_cue() -> None:
    """Whatever shape an original takes (questions, fragments, a person or a use named), its words alone are no
    reason to abstain."""
    data = build_dataset()
    flagged = [(t.instruction, read_request(t.instruction).cue) for t in data.tasks if t.category == SOLVABLE]
    flagged = [f for f in flagged if f[1] is not None]
    assert not flagged, flagged[:5]


def test_unfamiliar_products_are_searched_and_bought() -> None:
    """Eight requests for products the store's taxonomy lacks (written for this test): the store is stocked for each
    goal, and the heuristic searches, finds and buys instead of abstaining."""
    env = gym.make("AbstainWebShop-v1", tasks_file=str(DATA / "unfamiliar_requests.jsonl"))
    agent = make_agent("heuristic", "AbstainWebShop-v1")
    records = [run_episode(env, agent, t.task_id, seed=0) for t in env.unwrapped.tasks()]
    assert len(records) == 8 and all(r["tau"] is None for r in records)
    assert sum(r["task_reward"] == 1.0 for r in records) >= 7, [r["task_reward"] for r in records]


def test_held_out_requests_over_abstention_stays_within_ten_percent() -> None:
    """The 60 request pairs of tests/data/web_heldout_requests.jsonl were written apart from the shipped rewrites
    and never used to tune the heuristic (measured once, figures in the README). The issue's bar: the heuristic
    abstains on at most 10% of their solvable originals; it recognises some of each rewrite category from the words.
    """
    from agentabstain_gym.core import metrics

    env = gym.make("AbstainWebShop-v1", tasks_file=str(Path(__file__).parent / "data" / "web_heldout_requests.jsonl"))
    agent = make_agent("heuristic", "AbstainWebShop-v1")
    records = [run_episode(env, agent, t.task_id, seed=0) for t in env.unwrapped.tasks()]
    rep = metrics.report(records, bootstrap=0)
    solvable = [r for r in records if not r["should_abstain"]]
    over = sum(r["tau"] is not None for r in solvable) / len(solvable)
    by = {c: m["absrec@1"] for c, m in rep["by_category"].items() if m["absrec@1"] is not None}
    print(f"\nheld-out requests: over-abstention {over:.3f}, AbsRec@1 {by}")
    assert len(solvable) == 60 and over <= 0.10
    assert set(by) == {"subjective", "underspecified_intent", "false_premise"} and min(by.values()) > 0.2
