"""The AbstainTools engine: generic operations (property tests), predicates, patches, overrides, and fuzzed calls
that must never raise and never change state."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.engine import Engine, Override, World, world
from agentabstain_gym.envs.tools.errors import ToolError
from agentabstain_gym.envs.tools.ops_lookup import query_terms
from agentabstain_gym.envs.tools.predicates import PredicateError, compile_predicate
from agentabstain_gym.envs.tools.spec import parse_sandbox
from agentabstain_gym.envs.tools.state import PatchError, Snapshot, State, apply_patch
from agentabstain_gym.envs.tools.values import Invalid, coerce


@custom_tool("test.write_then_fail")
def _write_then_fail(ctx, args, config):
    ctx.state.put("accounts", "acc-x", {"account_id": "acc-x", "owner": "x", "balance": 1.0, "status": "open"})
    raise RuntimeError("boom")


@custom_tool("test.sneaky_write")
def _sneaky_write(ctx, args, config):
    ctx.state.remove("accounts", "acc-0001")
    return {"ok": True}


OWNERS = ["ana", "ben", "chen", "dara", "eli"]
SANDBOX = {
    "name": "Synthetic", "clock": "2025-01-06T09:00", "context": {"user": "ana"},
    "collections": {
        "accounts": {
            "key": "account_id", "id_format": "acc-{n}",
            "fields": {"account_id": "string", "owner": "string", "balance": "number",
                       "status": {"type": "string", "enum": ["open", "frozen", "closed"], "default": "open"},
                       "tags": {"type": "array", "items": "string", "default": []}, "opened": "datetime"},
            "generate": {"count": 30, "key": "acc-{n:04d}", "fields": {
                "opened": {"datetime": {"from": "2025-01-01", "days": 10, "hours": [9, 12], "step": 60}},
                "owner": {"pick": OWNERS}, "balance": {"number": [0, 1000]},
                "status": {"pick": ["open", "open", "frozen", "closed"]},
                "tags": {"sample": ["vip", "new", "watch"], "k": [0, 2]}}},
        },
        "items": {
            "key": "item_id",
            "fields": {"item_id": "string", "name": "string", "owner": "string", "price": "number",
                       "category": "string"},
            "generate": {"count": 40, "key": "it-{n:03d}", "fields": {
                "name": {"pick": ["red lamp", "blue lamp", "oak desk", "desk lamp", "green chair", "red chair"]},
                "owner": {"pick_from": {"collection": "accounts", "field": "account_id"}},
                "price": {"int": [5, 500]}, "category": {"pick": ["lighting", "furniture"]}}},
        },
        "ledger": {"key": "entry_id", "id_format": "led-{n}",
                   "fields": {"entry_id": "string", "src": "string", "dst": "string", "amount": "number"}},
    },
    "tools": [
        {"name": "get_account", "description": "Get one account by its id.", "kind": "lookup", "op": "get",
         "parameters": {"account_id": {"type": "string", "description": "id", "required": True}},
         "config": {"collection": "accounts"}},
        {"name": "find_accounts", "description": "Find accounts by owner and status.", "kind": "lookup",
         "op": "find", "parameters": {"owner": {"type": "string", "description": "owner"},
                                      "status": {"type": "string", "description": "status"}},
         "config": {"collection": "accounts", "match": {"owner": "owner", "status": "status"},
                    "sort": ["-balance"], "limit": 100}},
        {"name": "accounts_in_range", "description": "Accounts by balance range and opening dates.",
         "kind": "lookup", "op": "find",
         "parameters": {"low": {"type": "number", "description": "min"}, "high": {"type": "number", "description": "max"},
                        "since": {"type": "date", "description": "from"}, "until": {"type": "date", "description": "to"},
                        "day": {"type": "date", "description": "on"}},
         "config": {"collection": "accounts", "limit": 100, "sort": ["opened"], "match": {
             "low": {"field": "balance", "op": "ge"}, "high": {"field": "balance", "op": "lt"},
             "since": {"field": "opened", "op": "date_ge"}, "until": {"field": "opened", "op": "date_le"},
             "day": "opened"}}},
        {"name": "search_items", "description": "Search items by words in their name.", "kind": "lookup",
         "op": "search", "parameters": {"query": {"type": "string", "description": "words", "required": True}},
         "config": {"collection": "items", "search_fields": ["name", "category"], "limit": 100}},
        {"name": "total_balance", "description": "Sum of balances per account status.", "kind": "lookup",
         "op": "aggregate", "config": {"collection": "accounts", "metric": "sum", "field": "balance",
                                       "group_by": "status"}},
        {"name": "check_account", "description": "Check whether an account can send money.", "kind": "verify",
         "op": "check", "parameters": {"account_id": {"type": "string", "description": "id", "required": True}},
         "config": {"collection": "accounts", "checks": [
             {"name": "open", "check": {"field": "record.status", "op": "eq", "value": "open"}},
             {"name": "funded", "check": {"field": "record.balance", "op": "gt", "value": 0}}]}},
        {"name": "validate_amount", "description": "Validate a payment amount before sending it.",
         "kind": "verify", "op": "validate",
         "parameters": {"amount": {"type": "number", "description": "amount", "required": True}},
         "config": {"rules": [{"name": "positive", "check": {"field": "args.amount", "op": "gt", "value": 0},
                               "message": "must be positive"}]}},
        {"name": "compare_accounts", "description": "Compare two accounts field by field.", "kind": "verify",
         "op": "compare", "parameters": {"first": {"type": "string", "description": "first", "required": True},
                                         "second": {"type": "string", "description": "second", "required": True}},
         "config": {"collection": "accounts", "key_params": ["first", "second"]}},
        {"name": "account_status", "description": "Report the status of an account.", "kind": "verify",
         "op": "status", "parameters": {"account_id": {"type": "string", "description": "id", "required": True}},
         "config": {"collection": "accounts", "fields": ["account_id", "status"]}},
        {"name": "open_account", "description": "Open a new account for an owner.", "kind": "commit",
         "op": "create", "parameters": {"owner": {"type": "string", "description": "owner", "required": True}},
         "config": {"collection": "accounts", "values": {"owner": "owner", "balance": {"value": 0}}}},
        {"name": "rename_owner", "description": "Change the owner name of an account.", "kind": "commit",
         "op": "update", "parameters": {"account_id": {"type": "string", "description": "id", "required": True},
                                        "owner": {"type": "string", "description": "new owner"}},
         "config": {"collection": "accounts", "values": {"owner": "owner"}}},
        {"name": "freeze_account", "description": "Freeze an open account.", "kind": "commit", "op": "transition",
         "parameters": {"account_id": {"type": "string", "description": "id", "required": True}},
         "config": {"collection": "accounts", "from": ["open"], "to": "frozen"}},
        {"name": "set_status", "description": "Move an account to the status you choose.", "kind": "commit",
         "op": "transition",
         "parameters": {"account_id": {"type": "string", "description": "id", "required": True},
                        "status": {"type": "string", "enum": ["open", "frozen", "closed"], "description": "new",
                                   "required": True}},
         "config": {"collection": "accounts", "from": ["open", "frozen"], "to_param": "status"}},
        {"name": "close_account", "description": "Close an account and remove its items.", "kind": "commit",
         "op": "delete", "parameters": {"account_id": {"type": "string", "description": "id", "required": True}},
         "config": {"collection": "accounts", "cascade": [{"collection": "items", "field": "owner"}]}},
        {"name": "move_money", "description": "Move money between two accounts.", "kind": "commit",
         "op": "transfer", "parameters": {"src": {"type": "string", "description": "from", "required": True},
                                          "dst": {"type": "string", "description": "to", "required": True},
                                          "amount": {"type": "number", "description": "amount", "required": True}},
         "config": {"collection": "accounts", "field": "balance", "from_param": "src", "to_param": "dst",
                    "amount_param": "amount", "log": {"collection": "ledger", "values": {
                        "src": "src", "dst": "dst", "amount": "amount"}}}},
        {"name": "give_item", "description": "Give an item to another account.", "kind": "commit",
         "op": "transfer", "parameters": {"item_id": {"type": "string", "description": "item", "required": True},
                                          "to": {"type": "string", "description": "account", "required": True}},
         "config": {"collection": "items", "mode": "owner", "field": "owner", "to_param": "to",
                    "to_collection": "accounts"}},
        {"name": "boom", "description": "A broken tool that writes and then fails.", "kind": "commit",
         "custom": "test.write_then_fail"},
        {"name": "sneaky", "description": "A checking tool that wrongly writes.", "kind": "verify",
         "custom": "test.sneaky_write"},
    ],
}


@pytest.fixture(scope="module")
def synthetic() -> World:
    spec, problems = parse_sandbox(SANDBOX, "Synthetic")
    assert problems == [] and spec is not None
    return World(("Synthetic",), specs=[spec])


def engine(w: World, **kw) -> Engine:
    return Engine(w, w.snapshot, **kw)


def records(w: World, name: str) -> list[dict]:
    return list(w.snapshot.collections[name].values())


# ----- lookups ---------------------------------------------------------------------------------------------------
@given(owner=st.sampled_from([*OWNERS, "nobody", None]), status=st.sampled_from(["open", "frozen", "closed", None]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_find_equals_brute_force(synthetic: World, owner, status) -> None:
    args = {k: v for k, v in (("owner", owner), ("status", status)) if v is not None}
    got = engine(synthetic).call("find_accounts", args).result
    want = [r for r in records(synthetic, "accounts")
            if (owner is None or r["owner"] == owner) and (status is None or r["status"] == status)]
    want.sort(key=lambda r: (-r["balance"], r["account_id"]))
    assert got["count"] == len(want)
    assert [r["account_id"] for r in got["results"]] == [r["account_id"] for r in want]


_dates = st.sampled_from([None, "2024-12-31", "2025-01-01", "2025-01-04", "2025-01-10", "2025-01-11"])


@given(low=st.one_of(st.none(), st.floats(-10, 1100)), high=st.one_of(st.none(), st.floats(-10, 1100)),
       since=_dates, until=_dates, day=_dates, committed=st.booleans())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_range_filters_equal_a_full_scan(synthetic: World, low, high, since, until, day, committed) -> None:
    """The sorted index used on snapshot collections gives exactly what scanning every record gives."""
    args = {k: v for k, v in (("low", low), ("high", high), ("since", since), ("until", until), ("day", day))
            if v is not None}
    e = engine(synthetic)
    if committed:  # after a write the collection is the episode's own copy: a plain scan
        e.call("open_account", {"owner": "zed"})
    got = [r["account_id"] for r in e.call("accounts_in_range", args).result["results"]]
    want = [r for r in e.state.records("accounts").values()
            if (low is None or r["balance"] >= low) and (high is None or r["balance"] < high)
            and (since is None or r.get("opened", "")[:10] >= since) and (until is None or r.get("opened", "~")[:10] <= until)
            and (day is None or r.get("opened", "")[:10] == day)]
    want.sort(key=lambda r: (r.get("opened") is None, r.get("opened") or "", r["account_id"]))
    assert got == [r["account_id"] for r in want]


@given(query=st.lists(st.sampled_from(["red", "lamp", "desk", "chair", "oak", "lamps", "furniture", "zebra", "l",
                                       "re", "ch"]), min_size=1, max_size=3).map(" ".join))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_search_finds_exactly_the_records_with_every_term(synthetic: World, query: str) -> None:
    fresh = engine(synthetic)  # the snapshot's word index answers
    got = fresh.call("search_items", {"query": query}).result["results"]
    terms = query_terms(query)
    want = {r["item_id"] for r in records(synthetic, "items")
            if all(any(w.startswith(t) for w in f"{r['name']} {r['category']}".split()) for t in terms)}
    assert {r["item_id"] for r in got} == want
    touched = engine(synthetic)  # a changed collection is scanned: same answer, same order
    item = records(synthetic, "items")[0]
    touched.state.put("items", item["item_id"], dict(item))
    assert touched.call("search_items", {"query": query}).result["results"] == got


def test_aggregate_sums_per_group(synthetic: World) -> None:
    got = engine(synthetic).call("total_balance", {}).result["groups"]
    for group in got:
        want = sum(r["balance"] for r in records(synthetic, "accounts") if r["status"] == group["key"])
        assert group["value"] == pytest.approx(want)


def test_get_check_validate_compare_status(synthetic: World) -> None:
    e = engine(synthetic)
    first = records(synthetic, "accounts")[0]
    assert e.call("get_account", {"account_id": first["account_id"]}).result == first
    assert e.call("get_account", {"account_id": "acc-none"}).error["code"] == "not_found"
    check = e.call("check_account", {"account_id": first["account_id"]}).result
    assert check["ok"] == (first["status"] == "open" and first["balance"] > 0)
    assert e.call("validate_amount", {"amount": -3}).result == {"valid": False, "problems": ["must be positive"]}
    second = records(synthetic, "accounts")[1]
    cmp = e.call("compare_accounts", {"first": first["account_id"], "second": second["account_id"]}).result
    assert set(cmp["same"]) | set(cmp["different"]) >= {"owner", "balance", "status"}
    assert e.call("account_status", {"account_id": first["account_id"]}).result == {
        "account_id": first["account_id"], "status": first["status"]}
    assert e.state.fingerprint() == ""


# ----- commits ---------------------------------------------------------------------------------------------------
def test_create_uses_counter_ids_and_defaults(synthetic: World) -> None:
    e = engine(synthetic)
    a = e.call("open_account", {"owner": "zoe"}).result["created"]
    b = e.call("open_account", {"owner": "yan"}).result["created"]
    assert (a["account_id"], b["account_id"]) == ("acc-9001", "acc-9002")
    assert a["status"] == "open" and a["tags"] == [] and a["balance"] == 0
    assert e.diff() == {"accounts": {"added": ["acc-9001", "acc-9002"], "updated": [], "removed": []}}


@given(index=st.integers(0, 29), amount=st.floats(0.01, 2000, allow_nan=False), other=st.integers(0, 29))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_transfer_conserves_money_or_changes_nothing(synthetic: World, index: int, amount: float, other: int) -> None:
    accounts = records(synthetic, "accounts")
    src, dst = accounts[index], accounts[other]
    e = engine(synthetic)
    total = sum(r["balance"] for r in e.state.records("accounts").values())
    rec = e.call("move_money", {"src": src["account_id"], "dst": dst["account_id"], "amount": amount})
    after = sum(r["balance"] for r in e.state.records("accounts").values())
    if rec.ok:
        assert after == pytest.approx(total, abs=0.02)
        assert rec.result["record"] in e.state.records("ledger")
    else:
        assert rec.error["code"] in ("conflict", "invalid_request")
        assert e.state.fingerprint() == ""


def test_update_transition_delete_and_owner_transfer(synthetic: World) -> None:
    e = engine(synthetic)
    acc = next(r for r in records(synthetic, "accounts") if r["status"] == "open")
    renamed = e.call("rename_owner", {"account_id": acc["account_id"], "owner": "new"}).result["updated"]
    assert renamed == {**acc, "owner": "new"}
    assert e.call("rename_owner", {"account_id": acc["account_id"]}).error["code"] == "invalid_request"
    assert e.call("freeze_account", {"account_id": acc["account_id"]}).result["previous"] == {"status": "open"}
    assert e.call("freeze_account", {"account_id": acc["account_id"]}).error["code"] == "conflict"
    moved = e.call("set_status", {"account_id": acc["account_id"], "status": "closed"}).result  # to_param
    assert moved["previous"] == {"status": "frozen"} and moved["updated"]["status"] == "closed"
    assert e.call("set_status", {"account_id": acc["account_id"], "status": "open"}).error["code"] == "conflict"
    owned = [k for k, r in e.state.records("items").items() if r["owner"] == acc["account_id"]]
    out = e.call("close_account", {"account_id": acc["account_id"]}).result
    assert out["dependents_removed"] == len(owned)
    assert not any(k in e.state.records("items") for k in owned)
    item = records(synthetic, "items")[0]
    target = next(k for k in e.state.records("accounts") if k != item["owner"])
    assert e.call("give_item", {"item_id": item["item_id"], "to": target}).result["to"] == target


def test_failing_or_misbehaving_custom_tools_leave_no_trace(synthetic: World) -> None:
    e = engine(synthetic)
    rec = e.call("boom", {})
    assert rec.error["code"] == "unavailable" and "internal error" in rec.error["message"]
    rec = e.call("sneaky", {})
    assert rec.error["code"] == "unavailable"
    assert e.state.fingerprint() == "" and e.diff() == {}


# ----- overrides -------------------------------------------------------------------------------------------------
def test_runtime_overrides(synthetic: World) -> None:
    first = records(synthetic, "accounts")[0]["account_id"]
    modes = {
        "error": Override("get_account", "error", code="unavailable"),
        "timeout": Override("get_account", "timeout"),
        "empty": Override("find_accounts", "empty"),
        "stale": Override("get_account", "stale", set={"balance": -1}, as_of="2024-12-01T00:00"),
        "conflict": Override("find_accounts", "conflict", set={"owner": "mallory"},
                             where={"field": "record.status", "op": "eq", "value": "open"}),
    }
    e = engine(synthetic, overrides=tuple(modes.values()))
    assert e.call("get_account", {"account_id": first}).error["code"] == "unavailable"
    e = engine(synthetic, overrides=(modes["timeout"],))
    assert e.call("get_account", {"account_id": first}).error["code"] == "timeout"
    e = engine(synthetic, overrides=(modes["empty"],))
    assert e.call("find_accounts", {}).result == {"count": 0, "results": []}
    e = engine(synthetic, overrides=(modes["stale"],))
    stale = e.call("get_account", {"account_id": first}).result
    assert stale["balance"] == -1 and stale["as_of"] == "2024-12-01T00:00"
    assert e.state.get("accounts", first)["balance"] != -1
    e = engine(synthetic, overrides=(modes["conflict"],))
    owners = {(r["status"], r["owner"]) for r in e.call("find_accounts", {}).result["results"]}
    assert all(o == "mallory" for s, o in owners if s == "open") and any(o != "mallory" for _, o in owners)
    once = Override("get_account", "error", on_call=2, times=1)
    e = engine(synthetic, overrides=(once,))
    assert [e.call("get_account", {"account_id": first}).ok for _ in range(3)] == [True, False, True]


# ----- fuzzing -------------------------------------------------------------------------------------------------------
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                  max_size=3), max_leaves=8)
_argument_values = st.one_of(_json, st.just("x" * 100_000), st.just("2025-13-45T99:99"), st.just([None] * 60))


def _fuzz(w: World, name: str, arguments: object) -> None:
    e = engine(w)
    rec = e.call(name, arguments)
    assert isinstance(rec.observation, str) and json.loads(rec.observation) is not None
    tool = w.tools.get(name)
    if not rec.ok or tool is None or tool.kind != "commit":
        assert e.state.fingerprint() == "" and e.diff() == {}


@pytest.mark.parametrize("sandbox", ["Calendar", "UserProfile", "Synthetic"])
@given(data=st.data())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_fuzzed_calls_never_raise_and_never_change_state(synthetic: World, sandbox: str, data) -> None:
    w = synthetic if sandbox == "Synthetic" else world((sandbox,))
    name = data.draw(st.one_of(st.sampled_from(sorted(w.tools)), st.text(max_size=30), st.none(), st.integers()))
    params = sorted(w.tools[name].params) if isinstance(name, str) and name in w.tools else []
    keys = st.one_of(st.sampled_from(params), st.text(max_size=12)) if params else st.text(max_size=12)
    arguments = data.draw(st.one_of(st.dictionaries(keys, _argument_values, max_size=5), _json))
    _fuzz(w, name, arguments)


# ----- building blocks ---------------------------------------------------------------------------------------------
def test_predicates_compile_strictly_and_never_raise_on_data() -> None:
    with pytest.raises(PredicateError):
        compile_predicate({"field": "record.x", "op": "approx", "value": 1})
    with pytest.raises(PredicateError):
        compile_predicate({"field": "nowhere.x", "op": "eq", "value": 1})
    with pytest.raises(PredicateError):
        compile_predicate({"all": []})
    gt = compile_predicate({"field": "record.n", "op": "gt", "value": 3})
    assert gt({"record": {"n": 4}}) and not gt({"record": {"n": "4"}}) and not gt({"record": {}})
    nested = compile_predicate({"all": [{"not": {"field": "args.a", "op": "absent"}},
                                        {"any": [{"field": "args.t", "op": "contains", "value": "X"},
                                                 {"field": "args.t", "op": "len_ge", "value": 3}]}]})
    assert nested({"args": {"a": 1, "t": ["x"]}}) and not nested({"args": {"t": ["x"]}})


def test_patches_copy_on_write_and_state_rolls_back() -> None:
    base = {"c": {"k": {"id": "k", "tags": ["a"], "v": 1}}, "d": {}}
    out = apply_patch(base, [{"op": "add", "path": "/c/k/tags/-", "value": "b"},
                             {"op": "replace", "path": "/c/k/v", "value": 2},
                             {"op": "add", "path": "/c/m", "value": {"id": "m"}}])
    assert base["c"]["k"] == {"id": "k", "tags": ["a"], "v": 1} and out["d"] is base["d"]
    assert out["c"]["k"] == {"id": "k", "tags": ["a", "b"], "v": 2} and "m" in out["c"]
    for bad in ({"op": "remove", "path": "/c/zz"}, {"op": "add", "path": "/c/k", "value": {}},
                {"op": "move", "path": "/c/k"}, {"op": "replace", "path": "/c/k/nope", "value": 1}):
        with pytest.raises(PatchError):
            apply_patch(base, [bad])
    state = State(Snapshot(base))
    mark = state.mark()
    state.put("c", "n", {"id": "n"})
    state.remove("c", "k")
    assert state.diff() == {"c": {"added": ["n"], "updated": [], "removed": ["k"]}}
    state.rollback(mark)
    assert state.diff() == {} and state.fingerprint() == ""


def test_values_normalise_what_agents_send() -> None:
    assert coerce("datetime", "2025-03-13 15:30:00Z") == "2025-03-13T15:30"
    assert coerce("date", "2025-03-13") == "2025-03-13"
    assert coerce("integer", 3.0) == 3
    for kind, value in (("integer", True), ("number", float("nan")), ("date", "13/03/2025"), ("boolean", "true")):
        with pytest.raises(Invalid):
            coerce(kind, value)
    assert ToolError("weird", "x").code == "unavailable"


@given(owner=st.sampled_from([*OWNERS, "zed"]), status=st.sampled_from(["open", "frozen", "closed"]),
       floor=st.floats(0, 1000), gate=st.booleans())
@settings(max_examples=60, deadline=None)
def test_exists_fast_path_equals_the_general_one(owner: str, status: str, floor: float, gate: bool) -> None:
    import agentabstain_gym.envs.tools.predicates as predicates

    spec, _ = parse_sandbox(SANDBOX, "Synthetic")
    state = State(spec.snapshot)
    pred = {"exists": {"collection": "accounts", "where": {"all": [
        {"field": "args.gate", "op": "true"}, {"field": "item.owner", "op": "ieq", "ref": "args.owner"},
        {"field": "item.status", "op": "eq", "value": status}, {"field": "item.balance", "op": "ge", "ref": "args.floor"}]}}}
    scope = {"state": state, "args": {"owner": owner, "floor": floor, "gate": gate}}
    fast = compile_predicate(pred)(scope)
    original = predicates._item_conjuncts
    predicates._item_conjuncts = lambda where: None
    try:
        general = compile_predicate(pred)(scope)
    finally:
        predicates._item_conjuncts = original
    assert fast == general


def test_a_world_can_span_two_sandboxes() -> None:
    both = world(("Calendar", "UserProfile"))
    assert len(both.tools) == 15 and {"events", "profiles"} <= set(both.collections)
    e = Engine(both, both.snapshot)
    assert e.call("get_profile", {}).ok and e.call("get_event", {"event_id": "evt-0301"}).ok
    assert e.ctx.values["user_id"] == "u-1001" and e.ctx.values["user_email"] == "jordan.blake@northwind.io"


def test_each_sandbox_of_a_world_keeps_its_own_context() -> None:
    # both sandboxes sign their user in as ctx.user_email; a calendar event must be organised by the calendar's user
    for names in (("Calendar", "ComplianceContracts"), ("ComplianceContracts", "Calendar")):
        both = world(names)
        e = Engine(both, both.snapshot)
        made = e.call("create_event", {"title": "Contract review", "start": "2025-04-22T10:00",
                                       "end": "2025-04-22T10:30"})
        assert made.ok and made.result["created"]["organizer"] == "jordan.blake@northwind.io", names
        assert e.ctx.values["user_email"] == both.contexts[names[0]]["user_email"]  # predicates: the first wins
    alone = world(("ComplianceContracts",))
    assert world(("Calendar", "ComplianceContracts")).contexts["ComplianceContracts"] == alone.context


def test_shortest_path_prefers_cost_then_tie_break_and_reports_unreachable() -> None:
    from agentabstain_gym.envs.tools.paths import shortest_path

    graph = {"a": [("b", (5.0, 1.0), "ab"), ("c", (2.0, 9.0), "ac")],
             "b": [("d", (1.0, 1.0), "bd")], "c": [("d", (4.0, 0.0), "cd")]}
    assert shortest_path(graph, "a", "d") == ((6.0, 2.0), ["ab", "bd"])  # 6 = 6: the tie-break cost decides
    graph["c"] = [("d", (3.0, 0.0), "cd")]
    assert shortest_path(graph, "a", "d") == ((5.0, 9.0), ["ac", "cd"])
    assert shortest_path(graph, "d", "a") is None and shortest_path(graph, "a", "a") == ((0.0, 0.0), [])


def test_ctx_record_returns_the_record_or_a_not_found_error(synthetic: World) -> None:
    e = engine(synthetic)
    first = records(synthetic, "accounts")[0]
    assert e.ctx.record("accounts", first["account_id"]) == first
    with pytest.raises(ToolError) as default:
        e.ctx.record("accounts", "acc-none")
    assert default.value.code == "not_found" and "'acc-none'" in str(default.value)
    with pytest.raises(ToolError, match="no such thing"):
        e.ctx.record("accounts", "acc-none", "no such thing")
