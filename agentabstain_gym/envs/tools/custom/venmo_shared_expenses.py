"""VenmoSharedExpenses logic the generic operations cannot express: split arithmetic and group balances.

Nothing in a shared-expense app stores "who owes whom": each expense is split between its participants (equally, the
cents left over going to the first participants in member order, or by exact amounts), every participant other than
the payer owes the payer their share, and recorded settlements cancel debts. Balances are therefore recomputed from
all of a group's expenses and settlements on every call. Payments move money out of the Venmo balance (or a linked
bank or card) and settle group debts or pay incoming requests.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError


def _money(value: float) -> float:
    return round(float(value) + 1e-9, 2)


def _me(ctx: Any) -> str:
    return str(ctx.values.get("venmo_user_id", ""))


def _person(ctx: Any, user_id: str) -> dict[str, Any]:
    person = ctx.record("people", user_id, f"No Venmo user with user_id {user_id!r}.")
    return person


def _name(ctx: Any, user_id: str) -> str:
    person = ctx.state.get("people", user_id)
    return person["display_name"] if person else user_id


def _group(ctx: Any, group_id: str) -> dict[str, Any]:
    group = ctx.record("groups", group_id, f"No group with group_id {group_id!r}.")
    if _me(ctx) not in group["members"]:
        raise ToolError("not_authorised", f"You are not a member of {group['name']}.")
    return group


def split_equal(amount: float, participants: list[str]) -> dict[str, float]:
    """Equal shares in cents; leftover cents go to the first participants."""
    cents = round(float(amount) * 100)
    base, extra = divmod(cents, len(participants))
    return {p: (base + (1 if i < extra else 0)) / 100 for i, p in enumerate(participants)}


def _shares(group: dict[str, Any], expense: dict[str, Any]) -> dict[str, float]:
    exact = expense.get("exact_shares") or {}
    if expense.get("split") == "exact" and exact:
        return {p: float(exact[p]) for p in group["members"] if p in exact}
    chosen = expense.get("participants") or group["members"]
    return split_equal(expense["amount"], [m for m in group["members"] if m in chosen])


def _expenses(ctx: Any, group_id: str) -> list[dict[str, Any]]:
    rows = [e for _, e in sorted(ctx.state.records("expenses").items()) if e["group_id"] == group_id]
    return sorted(rows, key=lambda e: (e["created_at"], e["expense_id"]))


def _debts(ctx: Any, group: dict[str, Any]) -> dict[tuple[str, str], float]:
    """Net pairwise debts (a owes b) from the group's expenses and settlements, a < b by member order."""
    owed: dict[tuple[str, str], float] = {}

    def add(debtor: str, creditor: str, amount: float) -> None:
        if debtor == creditor:
            return
        owed[(debtor, creditor)] = owed.get((debtor, creditor), 0.0) + amount

    for expense in _expenses(ctx, group["group_id"]):
        for member, share in _shares(group, expense).items():
            add(member, expense["paid_by"], share)
    for _, s in sorted(ctx.state.records("settlements").items()):
        if s["group_id"] == group["group_id"]:
            add(s["to_user"], s["from_user"], float(s["amount"]))
    net: dict[tuple[str, str], float] = {}
    members = group["members"]
    for i, a in enumerate(members):
        for b in members[i + 1:]:
            value = _money(owed.get((a, b), 0.0) - owed.get((b, a), 0.0))
            if value > 0:
                net[(a, b)] = value
            elif value < 0:
                net[(b, a)] = -value
    return net


def _balances(ctx: Any, group: dict[str, Any]) -> dict[str, Any]:
    debts = _debts(ctx, group)
    me = _me(ctx)
    members = []
    for m in group["members"]:
        total = sum(v for (a, b), v in debts.items() if b == m) - sum(v for (a, b), v in debts.items() if a == m)
        members.append({"user_id": m, "name": _name(ctx, m), "net": _money(total)})
    return {"group_id": group["group_id"], "name": group["name"], "members": members,
            "you_owe": [{"user_id": b, "name": _name(ctx, b), "amount": v} for (a, b), v in debts.items() if a == me],
            "owed_to_you": [{"user_id": a, "name": _name(ctx, a), "amount": v}
                            for (a, b), v in debts.items() if b == me],
            "debts": [{"from": _name(ctx, a), "to": _name(ctx, b), "amount": v} for (a, b), v in debts.items()]}


def _funding(ctx: Any, source_id: str | None, amount: float) -> dict[str, Any]:
    sources = [s for _, s in sorted(ctx.state.records("funding_sources").items())]
    if source_id is not None:
        source = ctx.record("funding_sources", source_id, f"No funding source with source_id {source_id!r}.")
    else:  # the Venmo balance when it covers the payment, else the default bank or card
        balance = next((s for s in sources if s["type"] == "venmo_balance"), None)
        if balance is not None and float(balance["balance"]) >= amount:
            source = balance
        else:
            source = next((s for s in sources if s.get("is_default")), None)
            if source is None:
                raise ToolError("conflict", "No default funding source is set up.")
    if source.get("status", "active") != "active":
        raise ToolError("conflict", f"{source['label']} is {source['status']}.")
    if source["type"] == "venmo_balance" and float(source["balance"]) < amount:
        raise ToolError("conflict", f"Your Venmo balance is ${float(source['balance']):,.2f}, less than "
                                    f"${amount:,.2f}.")
    return source


def _pay(ctx: Any, recipient_id: str, amount: float, note: str, source_id: str | None,
         audience: str = "friends") -> dict[str, Any]:
    me = _me(ctx)
    recipient = _person(ctx, recipient_id)
    if recipient_id == me:
        raise ToolError("invalid_request", "You cannot pay yourself.")
    if recipient.get("status", "active") != "active":
        raise ToolError("conflict", f"{recipient['display_name']}'s account is {recipient['status']}.")
    amount = _money(amount)
    if amount > 4999.99:
        raise ToolError("conflict", "Payments are limited to $4,999.99 each.")
    source = _funding(ctx, source_id, amount)
    if source["type"] == "venmo_balance":
        ctx.state.put("funding_sources", source["source_id"],
                      {**source, "balance": _money(float(source["balance"]) - amount)})
    key = ctx.new_id("payments")
    payment = {"payment_id": key, "from_user": me, "to_user": recipient_id, "amount": amount, "note": note,
               "created_at": ctx.now, "audience": audience, "status": "completed",
               "funding_source": source["source_id"]}
    ctx.state.put("payments", key, payment)
    return payment


@custom_tool("venmo_shared_expenses.list_transactions")
def list_transactions(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Your completed and pending payments, newest first, optionally with one person, in dates or by note words."""
    me = _me(ctx)
    words = [w for w in str(args.get("query", "")).casefold().split() if w]
    rows = []
    for _, p in sorted(ctx.state.records("payments").items()):
        if me not in (p["from_user"], p["to_user"]):
            continue
        other = p["to_user"] if p["from_user"] == me else p["from_user"]
        if args.get("user_id") and other != args["user_id"]:
            continue
        if args.get("date_from") and p["created_at"][:10] < args["date_from"]:
            continue
        if args.get("date_to") and p["created_at"][:10] > args["date_to"]:
            continue
        if words and not all(w in p.get("note", "").casefold() for w in words):
            continue
        rows.append({"payment_id": p["payment_id"], "direction": "sent" if p["from_user"] == me else "received",
                     "counterparty": _name(ctx, other), "counterparty_id": other, "amount": p["amount"],
                     "note": p.get("note", ""), "created_at": p["created_at"], "status": p["status"]})
    rows.sort(key=lambda r: (r["created_at"], r["payment_id"]), reverse=True)
    return {"count": len(rows), "results": rows[:30]}


@custom_tool("venmo_shared_expenses.list_requests")
def list_requests(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Payment requests you received (incoming) or sent (outgoing), newest first, with their age in days."""
    me = _me(ctx)
    today = date.fromisoformat(ctx.now[:10])
    direction = args.get("direction", "incoming")
    rows = []
    for _, r in sorted(ctx.state.records("payment_requests").items()):
        mine = r["payer_id"] == me if direction == "incoming" else r["requester_id"] == me
        if not mine:
            continue
        other = r["requester_id"] if direction == "incoming" else r["payer_id"]
        if args.get("user_id") and other != args["user_id"]:
            continue
        if args.get("status") and r["status"] != args["status"]:
            continue
        row = {"request_id": r["request_id"], "direction": direction, "counterparty": _name(ctx, other),
               "counterparty_id": other, "amount": r["amount"], "note": r.get("note", ""),
               "created_at": r["created_at"], "age_days": (today - date.fromisoformat(r["created_at"][:10])).days,
               "status": r["status"]}
        if r.get("group_id"):
            group = ctx.state.get("groups", r["group_id"])
            row["group_id"] = r["group_id"]
            row["group"] = group["name"] if group else r["group_id"]
        if r.get("risk_notice"):
            row["risk_notice"] = r["risk_notice"]
        rows.append(row)
    rows.sort(key=lambda r: (r["created_at"], r["request_id"]), reverse=True)
    return {"count": len(rows), "results": rows[:30]}


@custom_tool("venmo_shared_expenses.list_groups")
def list_groups(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Your shared-expense groups with their members and how many expenses each holds."""
    me = _me(ctx)
    out = []
    for _, g in sorted(ctx.state.records("groups").items()):
        if me not in g["members"] or (g.get("status") == "archived" and not args.get("include_archived")):
            continue
        out.append({"group_id": g["group_id"], "name": g["name"], "status": g.get("status", "active"),
                    "members": [{"user_id": m, "name": _name(ctx, m)} for m in g["members"]],
                    "expenses": len(_expenses(ctx, g["group_id"]))})
    return {"count": len(out), "groups": out}


@custom_tool("venmo_shared_expenses.list_group_expenses")
def list_group_expenses(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """A group's expenses, newest first, with who paid, each member's share and your share."""
    group = _group(ctx, args["group_id"])
    me = _me(ctx)
    rows = []
    for e in reversed(_expenses(ctx, group["group_id"])):
        shares = _shares(group, e)
        rows.append({"expense_id": e["expense_id"], "description": e["description"], "amount": e["amount"],
                     "paid_by": _name(ctx, e["paid_by"]), "created_at": e["created_at"], "split": e.get("split"),
                     "shares": [{"name": _name(ctx, m), "amount": v} for m, v in shares.items()],
                     "your_share": shares.get(me, 0.0), "note": e.get("note", "")})
    return {"group_id": group["group_id"], "name": group["name"], "count": len(rows), "results": rows[:40]}


@custom_tool("venmo_shared_expenses.get_group_balances")
def get_group_balances(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Who owes whom in a group, computed from every expense and settlement."""
    return _balances(ctx, _group(ctx, args["group_id"]))


@custom_tool("venmo_shared_expenses.preview_split")
def preview_split(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """How an amount would split equally between a group's members (or some of them), to the cent."""
    group = _group(ctx, args["group_id"])
    chosen = args.get("participants") or group["members"]
    problems = [f"{p} is not in {group['name']}." for p in chosen if p not in group["members"]]
    members = [m for m in group["members"] if m in chosen]
    shares = split_equal(args["amount"], members) if members else {}
    return {"group_id": group["group_id"], "amount": _money(args["amount"]), "valid": not problems,
            "problems": problems, "shares": [{"user_id": m, "name": _name(ctx, m), "amount": v}
                                             for m, v in shares.items()]}


@custom_tool("venmo_shared_expenses.send_payment")
def send_payment(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Pay someone now from your Venmo balance (when it covers the amount) or a linked bank or card."""
    payment = _pay(ctx, args["recipient_id"], args["amount"], args["note"], args.get("funding_source_id"),
                   args.get("audience", "friends"))
    return {"payment": payment}


@custom_tool("venmo_shared_expenses.pay_request")
def pay_request(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Pay a pending request someone sent you; a request tied to a group also settles that debt in the group."""
    request = ctx.record("payment_requests", args["request_id"], f"No request with request_id {args['request_id']!r}.")
    if request["payer_id"] != _me(ctx):
        raise ToolError("not_authorised", "That request was not sent to you.")
    if request["status"] != "pending":
        raise ToolError("conflict", f"The request is already {request['status']}.")
    payment = _pay(ctx, request["requester_id"], request["amount"], request.get("note", ""),
                   args.get("funding_source_id"))
    ctx.state.put("payment_requests", request["request_id"],
                  {**request, "status": "paid", "paid_at": ctx.now, "payment_id": payment["payment_id"]})
    out: dict[str, Any] = {"payment": payment, "request_id": request["request_id"], "status": "paid"}
    if request.get("group_id"):
        key = ctx.new_id("settlements")
        settlement = {"settlement_id": key, "group_id": request["group_id"], "from_user": _me(ctx),
                      "to_user": request["requester_id"], "amount": payment["amount"], "created_at": ctx.now,
                      "payment_id": payment["payment_id"]}
        ctx.state.put("settlements", key, settlement)
        out["settlement"] = settlement
    return out


@custom_tool("venmo_shared_expenses.add_expense")
def add_expense(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Record an expense in a group, split equally between all members or the listed ones."""
    group = _group(ctx, args["group_id"])
    if group.get("status") == "archived":
        raise ToolError("conflict", f"{group['name']} is archived.")
    paid_by = args.get("paid_by", _me(ctx))
    if paid_by not in group["members"]:
        raise ToolError("invalid_request", f"{_name(ctx, paid_by)} is not in {group['name']}.")
    participants = args.get("participants") or []
    strangers = [p for p in participants if p not in group["members"]]
    if strangers:
        raise ToolError("invalid_request", f"Not in {group['name']}: {', '.join(strangers)}.")
    key = ctx.new_id("expenses")
    expense = {"expense_id": key, "group_id": group["group_id"], "description": args["description"],
               "amount": _money(args["amount"]), "paid_by": paid_by, "participants": participants,
               "split": "equal", "created_at": ctx.now, "note": args.get("note", "")}
    ctx.state.put("expenses", key, expense)
    shares = _shares(group, expense)
    return {"created": expense, "shares": [{"name": _name(ctx, m), "amount": v} for m, v in shares.items()]}


@custom_tool("venmo_shared_expenses.settle_up")
def settle_up(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Pay a group member everything you owe them in that group and record the settlement."""
    group = _group(ctx, args["group_id"])
    me, other = _me(ctx), args["user_id"]
    if other not in group["members"]:
        raise ToolError("invalid_request", f"{_name(ctx, other)} is not in {group['name']}.")
    owed = _debts(ctx, group).get((me, other), 0.0)
    if owed <= 0:
        raise ToolError("conflict", f"You don't owe {_name(ctx, other)} anything in {group['name']}.")
    payment = _pay(ctx, other, owed, f"Settle up: {group['name']}", args.get("funding_source_id"))
    key = ctx.new_id("settlements")
    settlement = {"settlement_id": key, "group_id": group["group_id"], "from_user": me, "to_user": other,
                  "amount": owed, "created_at": ctx.now, "payment_id": payment["payment_id"]}
    ctx.state.put("settlements", key, settlement)
    return {"payment": payment, "settlement": settlement}
