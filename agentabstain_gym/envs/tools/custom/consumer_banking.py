"""Banking logic the generic operations cannot express: moving money between own accounts (a credit card balance
goes down when it is paid) and bill payments that debit the account now or wait for their send date."""

from __future__ import annotations

from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_SOURCES = ("checking", "savings")
_DESTINATIONS = ("checking", "savings", "credit_card")


def _money(value: float) -> float:
    return round(float(value) + 1e-9, 2)


def _account(ctx: Any, account_id: str) -> dict[str, Any]:
    account = ctx.record("accounts", account_id, f"No account with account_id {account_id!r}.")
    if account.get("status") != "open":
        raise ToolError("conflict", f"Account {account['nickname']} (...{account['number_last4']}) is "
                                    f"{account.get('status')}.")
    return account


def _moved(account: dict[str, Any], amount: float) -> dict[str, Any]:
    """The account after `amount` enters it (negative: leaves it); on a credit card a payment lowers what is owed."""
    sign = -1 if account["type"] == "credit_card" else 1
    return {**account, "balance": _money(account["balance"] + sign * amount),
            "available_balance": _money(account["available_balance"] + amount)}


def _log(ctx: Any, account_id: str, merchant: str, description: str, category: str, amount: float,
         status: str = "posted") -> dict[str, Any]:
    key = ctx.new_id("transactions")
    txn = {"transaction_id": key, "account_id": account_id, "posted_at": ctx.now, "merchant": merchant,
           "description": description, "category": category, "amount": _money(amount), "status": status}
    ctx.state.put("transactions", key, txn)
    return txn


@custom_tool("consumer_banking.transfer_funds")
def transfer_funds(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Move money now from a checking or savings account to another of the customer's own accounts."""
    if args["from_account_id"] == args["to_account_id"]:
        raise ToolError("invalid_request", "The two accounts must differ.")
    source = _account(ctx, args["from_account_id"])
    target = _account(ctx, args["to_account_id"])
    amount = _money(args["amount"])
    if source["type"] not in _SOURCES:
        raise ToolError("invalid_request", f"Transfers can only come from a checking or savings account, not "
                                           f"{source['nickname']}.")
    if target["type"] not in _DESTINATIONS:
        raise ToolError("invalid_request", f"{target['nickname']} cannot receive transfers.")
    if amount > float(config.get("daily_limit", 25000)):
        raise ToolError("conflict", f"Online transfers are limited to ${config.get('daily_limit', 25000):,} a day.")
    if amount > source["available_balance"]:
        raise ToolError("conflict", f"Insufficient funds: {source['nickname']} has "
                                    f"${source['available_balance']:,.2f} available.")
    new_source, new_target = _moved(source, -amount), _moved(target, amount)
    ctx.state.put("accounts", source["account_id"], new_source)
    ctx.state.put("accounts", target["account_id"], new_target)
    key = ctx.new_id("transfers")
    transfer = {"transfer_id": key, "from_account_id": source["account_id"], "to_account_id": target["account_id"],
                "amount": amount, "memo": args.get("memo", ""), "status": "completed", "created_at": ctx.now}
    ctx.state.put("transfers", key, transfer)
    _log(ctx, source["account_id"], "Keystone Bank", f"Transfer to {target['nickname']} ...{target['number_last4']}",
         "transfer", -amount)
    _log(ctx, target["account_id"], "Keystone Bank",
         f"Transfer from {source['nickname']} ...{source['number_last4']}", "transfer", amount)
    return {
        "transfer": transfer,
        "from": {"account_id": source["account_id"], "balance": new_source["balance"],
                 "available_balance": new_source["available_balance"]},
        "to": {"account_id": target["account_id"], "balance": new_target["balance"],
               "available_balance": new_target["available_balance"]},
    }


@custom_tool("consumer_banking.send_payment")
def send_payment(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Pay a saved, active payee from a checking account: today (debited at once) or on a later date (scheduled)."""
    payee = ctx.record("payees", args["payee_id"], f"No payee with payee_id {args['payee_id']!r}.")
    if payee.get("status") != "active":
        raise ToolError("conflict", f"Payee {payee['name']} is inactive.")
    account = _account(ctx, args["from_account_id"])
    if account["type"] != "checking":
        raise ToolError("invalid_request", "Bill payments can only be sent from a checking account.")
    amount = _money(args["amount"])
    today = str(ctx.now)[:10]
    send_on = str(args.get("send_on") or today)
    if send_on < today:
        raise ToolError("invalid_request", f"send_on ({send_on}) is in the past.")
    if amount > float(config.get("daily_limit", 10000)):
        raise ToolError("conflict", f"Bill payments are limited to ${config.get('daily_limit', 10000):,} a day.")
    now = send_on == today
    if now and amount > account["available_balance"]:
        raise ToolError("conflict", f"Insufficient funds: {account['nickname']} has "
                                    f"${account['available_balance']:,.2f} available.")
    key = ctx.new_id("payments")
    payment = {"payment_id": key, "payee_id": payee["payee_id"], "payee_name": payee["name"],
               "from_account_id": account["account_id"], "amount": amount, "send_on": send_on,
               "memo": args.get("memo", ""), "status": "processing" if now else "scheduled",
               "confirmation": f"KB-{key.split('-')[-1]}-{account['number_last4']}", "created_at": ctx.now}
    ctx.state.put("payments", key, payment)
    out: dict[str, Any] = {"payment": payment}
    if now:
        new_account = _moved(account, -amount)
        ctx.state.put("accounts", account["account_id"], new_account)
        memo = f" - {payment['memo']}" if payment["memo"] else ""
        _log(ctx, account["account_id"], payee["name"], f"Bill pay{memo}", "services", -amount, status="pending")
        out["account"] = {"account_id": account["account_id"], "balance": new_account["balance"],
                          "available_balance": new_account["available_balance"]}
    return out
