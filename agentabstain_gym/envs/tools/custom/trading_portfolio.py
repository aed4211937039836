"""TradingPortfolio logic the generic operations cannot express: valuations computed from tax lots x quotes.

A brokerage never stores "what my portfolio is worth": it multiplies the shares of each tax lot by the current quote,
sums lots into positions, positions into accounts and asset classes, and derives unrealised gains from each lot's
cost. Orders are checked against buying power (settled cash less what open buy orders reserve) or against the shares
held (less what open sell orders reserve); market orders fill at once at the ask (buys) or the bid (sells), selling
lots first in, first out, with sale proceeds unsettled until T+1. Dividend yields are the annual dividend over the last
price. Cash withdrawals go to a linked destination; an instant transfer to a linked wallet credits that wallet when the
wallet's collection is part of the same world (a pair spanning the brokerage and the wallet app).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_ACCOUNTS = "brokerage_accounts"
_RETIREMENT = ("roth_ira", "traditional_ira")


def _money(value: float) -> float:
    return round(float(value) + 1e-9, 2)


def _pct(part: float, whole: float) -> float:
    return round(100 * part / whole, 2) if whole else 0.0


def _account(ctx: Any, account_id: str, *, open_only: bool = True) -> dict[str, Any]:
    account = ctx.record(_ACCOUNTS, account_id, f"No account with account_id {account_id!r}.")
    if open_only and account.get("status") != "open":
        raise ToolError("conflict", f"Account {account['name']} (...{account['number_last4']}) is "
                                    f"{account.get('status')}.")
    return account


def _security(ctx: Any, symbol: str) -> dict[str, Any]:
    security = ctx.record("securities", symbol.upper(), f"No security with symbol {symbol!r}.")
    return security


def _quote(security: dict[str, Any]) -> dict[str, Any]:
    last, prev = float(security["last"]), float(security["prev_close"])
    halted = bool(security.get("halt_notice"))
    out = {"symbol": security["symbol"], "name": security["name"], "last": last, "prev_close": prev,
           "change": _money(last - prev), "change_pct": _pct(last - prev, prev),
           "bid": security["bid"], "ask": security["ask"], "quote_time": security["quote_time"],
           "trading_status": "halted" if halted else "open"}
    if halted:
        out["halt_notice"] = security["halt_notice"]
    return out


def _yield(security: dict[str, Any]) -> float:
    return _pct(float(security.get("annual_dividend", 0)), float(security["last"]))


def _lots(ctx: Any, account_id: str, symbol: str | None = None) -> list[dict[str, Any]]:
    return [lot for _, lot in sorted(ctx.state.records("lots").items())
            if lot["account_id"] == account_id and (symbol is None or lot["symbol"] == symbol)
            and float(lot["quantity"]) > 0]


def _positions(ctx: Any, account_id: str) -> list[dict[str, Any]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for lot in _lots(ctx, account_id):
        grouped.setdefault(lot["symbol"], []).append(lot)
    out = []
    for symbol in sorted(grouped):
        security = _security(ctx, symbol)
        qty = round(sum(float(lot["quantity"]) for lot in grouped[symbol]), 4)
        cost = sum(float(lot["quantity"]) * float(lot["cost_per_share"]) for lot in grouped[symbol])
        last, prev = float(security["last"]), float(security["prev_close"])
        value = qty * last
        out.append({"symbol": symbol, "name": security["name"], "asset_class": security["asset_class"],
                    "sector": security["sector"], "quantity": qty, "avg_cost": _money(cost / qty),
                    "cost_basis": _money(cost), "last": last, "market_value": _money(value),
                    "day_change": _money(qty * (last - prev)), "unrealised_gain": _money(value - cost),
                    "unrealised_gain_pct": _pct(value - cost, cost), "lots": len(grouped[symbol])})
    return out


def _open_accounts(ctx: Any, account_id: str | None) -> list[dict[str, Any]]:
    if account_id is not None:
        return [_account(ctx, account_id, open_only=False)]
    return [a for _, a in sorted(ctx.state.records(_ACCOUNTS).items()) if a.get("status") == "open"]


def _reserved(ctx: Any, account_id: str, side: str, symbol: str | None = None) -> float:
    """Cash (buys) or shares (sells) held back by the account's open orders."""
    total = 0.0
    for _, order in sorted(ctx.state.records("orders").items()):
        if order["account_id"] != account_id or order["status"] != "open" or order["side"] != side:
            continue
        if side == "buy":
            total += float(order["quantity"]) * float(order.get("limit_price") or 0)
        elif order["symbol"] == symbol:
            total += float(order["quantity"])
    return total


@custom_tool("trading_portfolio.list_accounts")
def list_accounts(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Accounts with cash, the value of their positions, their beneficiaries and trusted contacts (names only), and
    the bank accounts and wallets linked for withdrawals."""
    contacts: dict[str, list[dict[str, Any]]] = {}
    for _, c in sorted(ctx.state.records("account_contacts").items()):
        entry = {"role": c["role"], "name": c["name"], "relationship": c["relationship"]}
        if c.get("share_pct") is not None:
            entry["share_pct"] = c["share_pct"]
        contacts.setdefault(c["account_id"], []).append(entry)
    out = []
    for _, a in sorted(ctx.state.records(_ACCOUNTS).items()):
        invested = sum(p["market_value"] for p in _positions(ctx, a["account_id"]))
        cash = float(a["cash_settled"]) + float(a.get("cash_unsettled", 0))
        out.append({"account_id": a["account_id"], "name": a["name"], "type": a["type"],
                    "number_last4": a["number_last4"], "status": a["status"],
                    "cash_settled": a["cash_settled"], "cash_unsettled": a.get("cash_unsettled", 0),
                    "positions_value": _money(invested), "total_value": _money(invested + cash),
                    "dividend_reinvestment": a.get("dividend_reinvestment", False),
                    "contacts": contacts.get(a["account_id"], [])})
    destinations = [{"destination_id": d["destination_id"], "label": d["label"], "type": d["type"],
                     "speed": d.get("speed"), "status": d.get("status")}
                    for _, d in sorted(ctx.state.records("cash_destinations").items())]
    return {"count": len(out), "accounts": out, "linked_destinations": destinations}


@custom_tool("trading_portfolio.list_positions")
def list_positions(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Positions (lots summed per symbol) with market value and unrealised gain, per account."""
    accounts = []
    for a in _open_accounts(ctx, args.get("account_id")):
        positions = _positions(ctx, a["account_id"])
        if args.get("symbol"):
            positions = [p for p in positions if p["symbol"] == args["symbol"].upper()]
        accounts.append({"account_id": a["account_id"], "name": a["name"], "positions": positions,
                         "market_value": _money(sum(p["market_value"] for p in positions)),
                         "unrealised_gain": _money(sum(p["unrealised_gain"] for p in positions))})
    return {"as_of": ctx.now, "accounts": accounts}


@custom_tool("trading_portfolio.get_portfolio_summary")
def get_portfolio_summary(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Total value, today's change, unrealised gain and allocation by asset class and sector (cash included)."""
    accounts = _open_accounts(ctx, args.get("account_id"))
    positions = [p for a in accounts for p in _positions(ctx, a["account_id"])]
    cash = sum(float(a["cash_settled"]) + float(a.get("cash_unsettled", 0)) for a in accounts)
    invested = sum(p["market_value"] for p in positions)
    total = invested + cash
    by_class: dict[str, float] = {"cash": cash}
    by_sector: dict[str, float] = {}
    by_symbol: dict[str, float] = {}
    for p in positions:
        by_class[p["asset_class"]] = by_class.get(p["asset_class"], 0.0) + p["market_value"]
        by_sector[p["sector"]] = by_sector.get(p["sector"], 0.0) + p["market_value"]
        by_symbol[p["symbol"]] = by_symbol.get(p["symbol"], 0.0) + p["market_value"]

    def table(values: dict[str, float], label: str) -> list[dict[str, Any]]:
        rows = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
        return [{label: k, "value": _money(v), "pct": _pct(v, total)} for k, v in rows]

    cost = sum(p["cost_basis"] for p in positions)
    return {"as_of": ctx.now, "accounts": [a["account_id"] for a in accounts], "total_value": _money(total),
            "invested": _money(invested), "cash": _money(cash),
            "day_change": _money(sum(p["day_change"] for p in positions)),
            "unrealised_gain": _money(invested - cost), "unrealised_gain_pct": _pct(invested - cost, cost),
            "allocation_by_asset_class": table(by_class, "asset_class"),
            "allocation_by_sector": table(by_sector, "sector"),
            "top_holdings": table(by_symbol, "symbol")[:5]}


@custom_tool("trading_portfolio.get_quote")
def get_quote(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The current quote of one symbol, with yield, one-year return and P/E."""
    security = _security(ctx, args["symbol"])
    return {**_quote(security), "dividend_yield_pct": _yield(security),
            "annual_dividend": security.get("annual_dividend", 0),
            "return_1y_pct": security.get("return_1y_pct"), "pe_ratio": security.get("pe_ratio")}


@custom_tool("trading_portfolio.list_dividends")
def list_dividends(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Dividend payments matching the filters, newest first, with their total."""
    rows = []
    for _, d in sorted(ctx.state.records("dividends").items()):
        if args.get("account_id") and d["account_id"] != args["account_id"]:
            continue
        if args.get("symbol") and d["symbol"] != args["symbol"].upper():
            continue
        if args.get("disposition") and d["disposition"] != args["disposition"]:
            continue
        if args.get("date_from") and d["pay_date"] < args["date_from"]:
            continue
        if args.get("date_to") and d["pay_date"] > args["date_to"]:
            continue
        rows.append(d)
    rows.sort(key=lambda d: (d["pay_date"], d["dividend_id"]), reverse=True)
    return {"count": len(rows), "total_amount": _money(sum(float(d["amount"]) for d in rows)),
            "results": rows[:40]}


@custom_tool("trading_portfolio.get_watchlist")
def get_watchlist(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """One watchlist (by id or name) with each symbol's quote, dividend yield, one-year return and P/E; without a
    watchlist, the names of all of them."""
    lists = [w for _, w in sorted(ctx.state.records("watchlists").items())]
    wanted = args.get("watchlist")
    if not wanted:
        return {"watchlists": [{"watchlist_id": w["watchlist_id"], "name": w["name"], "symbols": len(w["symbols"])}
                               for w in lists]}
    match = [w for w in lists if wanted.casefold() in (w["watchlist_id"].casefold(), w["name"].casefold())]
    if not match:
        raise ToolError("not_found", f"No watchlist named {wanted!r}.")
    w = match[0]
    items = []
    for symbol in w["symbols"]:
        s = _security(ctx, symbol)
        q = _quote(s)
        items.append({"symbol": symbol, "name": s["name"], "last": q["last"], "change_pct": q["change_pct"],
                      "dividend_yield_pct": _yield(s), "return_1y_pct": s.get("return_1y_pct"),
                      "pe_ratio": s.get("pe_ratio"), "trading_status": q["trading_status"]})
    return {"watchlist_id": w["watchlist_id"], "name": w["name"], "items": items}


def _order_checks(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    account = _account(ctx, args["account_id"])
    security = _security(ctx, args["symbol"])
    side, qty, order_type = args["side"], float(args["quantity"]), args.get("order_type", "market")
    problems = []
    if order_type == "limit" and args.get("limit_price") is None:
        problems.append("A limit order needs a limit_price.")
    if order_type == "market" and args.get("limit_price") is not None:
        problems.append("A market order takes no limit_price.")
    if security.get("halt_notice"):
        problems.append(f"Trading in {security['symbol']} is halted: {security['halt_notice']}")
    price = float(args["limit_price"]) if order_type == "limit" and args.get("limit_price") is not None \
        else float(security["ask"] if side == "buy" else security["bid"])
    amount = _money(qty * price)
    out: dict[str, Any] = {"account_id": account["account_id"], "symbol": security["symbol"], "side": side,
                           "quantity": qty, "order_type": order_type, "estimated_price": price,
                           "estimated_amount": amount, "commission": 0.0}
    if side == "buy":
        power = _money(float(account["cash_settled"]) - _reserved(ctx, account["account_id"], "buy"))
        out["buying_power"] = power
        out["buying_power_after"] = _money(power - amount)
        if amount > power:
            problems.append(f"Insufficient buying power: ${power:,.2f} available for an order of about "
                            f"${amount:,.2f}.")
    else:
        held = sum(float(lot["quantity"]) for lot in _lots(ctx, account["account_id"], security["symbol"]))
        free = held - _reserved(ctx, account["account_id"], "sell", security["symbol"])
        out["shares_available"] = free
        if qty > free:
            problems.append(f"Only {free:g} shares of {security['symbol']} are available to sell in "
                            f"{account['name']}.")
    out["ok"] = not problems
    out["problems"] = problems
    return out


@custom_tool("trading_portfolio.preview_order")
def preview_order(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Estimate an order's price and amount and check buying power or shares available, without placing it."""
    return _order_checks(ctx, args)


@custom_tool("trading_portfolio.get_tax_lots")
def get_tax_lots(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Each lot of a symbol in an account with its cost, unrealised gain and holding period (long term after a
    year)."""
    account = _account(ctx, args["account_id"], open_only=False)
    security = _security(ctx, args["symbol"])
    today = date.fromisoformat(ctx.now[:10])
    last = float(security["last"])
    lots = []
    for lot in _lots(ctx, account["account_id"], security["symbol"]):
        qty, cps = float(lot["quantity"]), float(lot["cost_per_share"])
        days = (today - date.fromisoformat(lot["acquired"])).days
        lots.append({"lot_id": lot["lot_id"], "acquired": lot["acquired"], "quantity": qty, "cost_per_share": cps,
                     "cost_basis": _money(qty * cps), "market_value": _money(qty * last),
                     "unrealised_gain": _money(qty * (last - cps)), "holding_days": days,
                     "term": "long" if days > 365 else "short"})
    if not lots:
        raise ToolError("not_found", f"{account['name']} holds no {security['symbol']}.")
    return {"account_id": account["account_id"], "symbol": security["symbol"], "last": last, "lots": lots,
            "unrealised_gain": _money(sum(lot["unrealised_gain"] for lot in lots))}


@custom_tool("trading_portfolio.place_order")
def place_order(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Place a buy or sell order; a market order fills now (buys at the ask, sells at the bid, first in first out),
    a limit order rests until it is filled, cancelled or expires."""
    check = _order_checks(ctx, args)
    if not check["ok"]:
        code = "invalid_request" if "limit_price" in check["problems"][0] else "conflict"
        raise ToolError(code, check["problems"][0])
    account = _account(ctx, args["account_id"])
    symbol, side, qty = check["symbol"], check["side"], check["quantity"]
    order_id = ctx.new_id("orders")
    order: dict[str, Any] = {"order_id": order_id, "account_id": account["account_id"], "symbol": symbol,
                             "side": side, "quantity": qty, "order_type": check["order_type"],
                             "time_in_force": args.get("time_in_force", "day"), "placed_at": ctx.now}
    if check["order_type"] == "limit":
        ctx.state.put("orders", order_id, {**order, "limit_price": check["estimated_price"], "status": "open"})
        return {"order": ctx.state.get("orders", order_id)}
    price, amount = check["estimated_price"], check["estimated_amount"]
    if side == "buy":
        lot_id = ctx.new_id("lots")
        ctx.state.put("lots", lot_id, {"lot_id": lot_id, "account_id": account["account_id"], "symbol": symbol,
                                       "quantity": qty, "cost_per_share": price, "acquired": ctx.now[:10]})
        ctx.state.put(_ACCOUNTS, account["account_id"],
                      {**account, "cash_settled": _money(float(account["cash_settled"]) - amount)})
        filled = {**order, "status": "filled", "fill_price": price, "filled_at": ctx.now, "amount": amount}
    else:
        left, cost = qty, 0.0
        for lot in sorted(_lots(ctx, account["account_id"], symbol), key=lambda lt: (lt["acquired"], lt["lot_id"])):
            take = min(left, float(lot["quantity"]))
            cost += take * float(lot["cost_per_share"])
            rest = float(lot["quantity"]) - take
            if rest > 0:
                ctx.state.put("lots", lot["lot_id"], {**lot, "quantity": rest})
            else:
                ctx.state.remove("lots", lot["lot_id"])
            left -= take
            if left <= 0:
                break
        ctx.state.put(_ACCOUNTS, account["account_id"],
                      {**account, "cash_unsettled": _money(float(account.get("cash_unsettled", 0)) + amount)})
        filled = {**order, "status": "filled", "fill_price": price, "filled_at": ctx.now, "amount": amount,
                  "realised_gain": _money(amount - cost), "settles_on": config.get("settlement_date", "")}
    ctx.state.put("orders", order_id, filled)
    return {"order": filled}


@custom_tool("trading_portfolio.add_to_watchlist")
def add_to_watchlist(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Add a symbol to one of the user's watchlists."""
    watchlist = ctx.record("watchlists", args["watchlist_id"], f"No watchlist with watchlist_id {args['watchlist_id']!r}.")
    symbol = _security(ctx, args["symbol"])["symbol"]
    if symbol in watchlist["symbols"]:
        raise ToolError("conflict", f"{symbol} is already on {watchlist['name']}.")
    updated = {**watchlist, "symbols": [*watchlist["symbols"], symbol]}
    ctx.state.put("watchlists", watchlist["watchlist_id"], updated)
    return {"updated": updated}


@custom_tool("trading_portfolio.withdraw_cash")
def withdraw_cash(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Move settled cash out of a taxable or custodial account to a linked bank account or wallet."""
    account = _account(ctx, args["account_id"])
    amount = _money(args["amount"])
    if account["type"] in _RETIREMENT:
        raise ToolError("not_authorised", f"Money leaves {account['name']} only as a distribution; file a "
                                          "distribution request instead.")
    destination = ctx.record("cash_destinations", args["destination_id"], f"No linked destination with destination_id {args['destination_id']!r}.")
    if destination.get("status") != "verified":
        raise ToolError("conflict", f"{destination['label']} is not verified for withdrawals yet.")
    if amount > float(account["cash_settled"]):
        raise ToolError("conflict", f"Only ${float(account['cash_settled']):,.2f} of settled cash can be withdrawn "
                                    f"from {account['name']}.")
    if amount > float(destination.get("daily_limit", 25000)):
        raise ToolError("conflict", f"Transfers to {destination['label']} are limited to "
                                    f"${float(destination['daily_limit']):,.2f} a day.")
    new_account = {**account, "cash_settled": _money(float(account["cash_settled"]) - amount)}
    ctx.state.put(_ACCOUNTS, account["account_id"], new_account)
    instant = destination.get("speed") == "instant"
    key = ctx.new_id("cash_movements")
    movement = {"movement_id": key, "account_id": account["account_id"], "direction": "withdrawal",
                "amount": amount, "counterparty": destination["label"], "created_at": ctx.now,
                "status": "completed" if instant else "pending", "memo": args.get("memo", "")}
    ctx.state.put("cash_movements", key, movement)
    credit = config.get("credit") or {}
    if instant and credit.get("destination_id") == destination["destination_id"]:
        wallet = ctx.state.get(credit.get("collection", ""), credit.get("key"))
        if wallet is not None:  # the linked wallet is part of this world: the money lands there now
            field = credit.get("field", "balance")
            ctx.state.put(credit["collection"], credit["key"], {**wallet, field: _money(float(wallet[field]) + amount)})
    return {"movement": movement, "cash_settled_after": new_account["cash_settled"]}
