"""Retail logic the generic operations cannot express: the cart, checkout, cancelling an order with its items, and
returns that check the item, its product and the return window before issuing a label."""

from __future__ import annotations

import datetime as dt
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_OPEN = ("placed", "processing")


def _today(ctx: Any) -> dt.date:
    return dt.date.fromisoformat(str(ctx.now)[:10])


def _money(value: float) -> float:
    return round(value + 1e-9, 2)


def _product(ctx: Any, sku: str) -> dict[str, Any]:
    product = ctx.record("products", sku, f"No product with sku {sku!r}.")
    return product


def _default(ctx: Any, collection: str) -> dict[str, Any] | None:
    return next((r for _, r in sorted(ctx.state.records(collection).items()) if r.get("is_default")), None)


@custom_tool("retail_orders.add_to_cart")
def add_to_cart(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Add a product to the cart at its current price, merging with a line of the same product already there."""
    product = _product(ctx, args["sku"])
    quantity = int(args.get("quantity", 1))
    same = [(k, r) for k, r in sorted(ctx.state.records("cart_items").items())
            if r.get("sku") == product["sku"] and not r.get("saved_for_later")]
    wanted = quantity + sum(int(r.get("quantity", 1)) for _, r in same)
    stock = int(product.get("stock", 0))
    if stock < wanted:
        raise ToolError("conflict", f"{product['name']} has only {stock} in stock.")
    if same:
        key, line = same[0]
        item = {**line, "quantity": wanted, "unit_price": product["price"]}
    else:
        key = ctx.new_id("cart_items")
        item = {"item_id": key, "sku": product["sku"], "product_name": product["name"], "quantity": quantity,
                "unit_price": product["price"], "saved_for_later": False, "added_at": ctx.now}
    ctx.state.put("cart_items", key, item)
    in_cart = sum(int(r.get("quantity", 1)) for r in ctx.state.records("cart_items").values()
                  if not r.get("saved_for_later"))
    return {"item": item, "items_in_cart": in_cart}


@custom_tool("retail_orders.place_order")
def place_order(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Check out the cart: price it, apply a promotion, pick the address and card, promise a delivery date, then
    write the order and its items, take the stock and empty the cart."""
    lines = [(k, r) for k, r in sorted(ctx.state.records("cart_items").items()) if not r.get("saved_for_later")]
    if not lines:
        raise ToolError("conflict", "Your cart has no items to check out (items saved for later are not bought).")
    if args.get("address_id"):
        address = ctx.record("addresses", args["address_id"], f"No saved address {args['address_id']!r}.")
    else:
        address = _default(ctx, "addresses")
        if address is None:
            raise ToolError("invalid_request", "You have no default address; give address_id.")
    if args.get("payment_id"):
        payment = ctx.record("payment_methods", args["payment_id"], f"No saved payment method {args['payment_id']!r}.")
    else:
        payment = _default(ctx, "payment_methods")
        if payment is None:
            raise ToolError("invalid_request", "You have no default payment method; give payment_id.")
    if payment.get("status") != "active":
        raise ToolError("conflict", f"The {payment.get('brand')} ending {payment.get('last4')} has expired.")

    items = []
    for _, line in lines:
        product = _product(ctx, line["sku"])
        quantity = int(line.get("quantity", 1))
        if int(product.get("stock", 0)) < quantity:
            raise ToolError("conflict", f"{product['name']} has only {product.get('stock', 0)} in stock.")
        items.append((product, quantity))
    subtotal = _money(sum(p["price"] * q for p, q in items))

    discount = 0.0
    code = args.get("promo_code")
    if code:
        promo = ctx.record("promo_codes", str(code).upper(), f"{code} is not a valid promotion code.")
        if promo.get("status") != "active" or str(promo.get("expires", "")) < _today(ctx).isoformat():
            raise ToolError("conflict", f"{promo['code']} can no longer be used.")
        eligible = sum(p["price"] * q for p, q in items
                       if not promo.get("category") or p.get("category") == promo["category"])
        if eligible < float(promo.get("min_spend", 0)) or eligible <= 0:
            raise ToolError("conflict", f"{promo['code']} needs ${promo.get('min_spend', 0):.2f} of eligible items.")
        discount = _money(eligible * float(promo.get("percent_off", 0)) / 100)

    speeds = config.get("speeds", {})
    speed = args.get("shipping_speed", "standard")
    rule = speeds.get(speed, {"days": 7, "fee": 0})
    fee = float(rule.get("fee", 0))
    if "free_over" in rule and subtotal - discount >= float(rule["free_over"]):
        fee = 0.0
    dispatch = max(int(p.get("ships_in_days", 1)) for p, _ in items)
    eta = _today(ctx) + dt.timedelta(days=int(rule.get("days", 7)) + dispatch - 1)
    if args.get("deliver_by") and eta.isoformat() > str(args["deliver_by"]):
        raise ToolError("conflict", f"With {speed.replace('_', '-')} shipping this order arrives on {eta.isoformat()} at "
                                    f"the earliest, after {args['deliver_by']}. Choose a faster speed or a later date.")

    order_id = ctx.new_id("orders")
    number = order_id.split("-", 1)[-1]
    order_lines = []
    for i, (product, quantity) in enumerate(items, start=1):
        line = {"line_id": f"ln-{number}-{i}", "order_id": order_id, "sku": product["sku"],
                "product_name": product["name"], "quantity": quantity, "unit_price": product["price"],
                "status": "ordered"}
        ctx.state.put("order_lines", line["line_id"], line)
        ctx.state.put("products", product["sku"], {**product, "stock": int(product["stock"]) - quantity})
        order_lines.append(line)
    order = {"order_id": order_id, "placed_at": ctx.now, "status": "placed", "item_summary": items[0][0]["name"],
             "item_count": sum(q for _, q in items), "ship_to": address["address_id"],
             "payment_id": payment["payment_id"], "shipping_speed": speed, "subtotal": subtotal,
             "discount": discount, "shipping_fee": _money(fee), "total": _money(subtotal - discount + fee),
             "estimated_delivery": eta.isoformat(), "tags": [], "notes": ""}
    if code:
        order["promo_code"] = str(code).upper()
    ctx.state.put("orders", order_id, order)
    for key, _ in lines:
        ctx.state.remove("cart_items", key)
    return {"order": order, "items": order_lines}


@custom_tool("retail_orders.cancel_order")
def cancel_order(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Cancel an unshipped order and every item still waiting in it; the payment is refunded."""
    order = ctx.record("orders", args["order_id"], f"No order {args['order_id']!r}.")
    if order.get("status") not in _OPEN:
        raise ToolError("conflict", f"Order {order['order_id']} is {order.get('status')}; only orders that have not "
                                    "shipped can be cancelled (request a return once it arrives).")
    updated = {**order, "status": "cancelled", "cancelled_at": ctx.now}
    if args.get("reason"):
        updated["cancel_reason"] = args["reason"]
    ctx.state.put("orders", order["order_id"], updated)
    cancelled = []
    for key, line in sorted(ctx.state.records("order_lines").items()):
        if line.get("order_id") == order["order_id"] and line.get("status") == "ordered":
            ctx.state.put("order_lines", key, {**line, "status": "cancelled"})
            cancelled.append(key)
    return {"updated": updated, "previous": {"status": order.get("status")}, "items_cancelled": cancelled,
            "refund": {"amount": order.get("total"), "payment_id": order.get("payment_id")}}


@custom_tool("retail_orders.request_return")
def request_return(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Open a return (refund, store credit or exchange) for a delivered item inside its window."""
    line = ctx.record("order_lines", args["line_id"], f"No order item {args['line_id']!r}.")
    if line.get("status") != "delivered":
        raise ToolError("conflict", f"The item is {line.get('status')}; only delivered items can be returned.")
    if not line.get("return_by") or str(line["return_by"]) < _today(ctx).isoformat():
        raise ToolError("conflict", f"The return window for {line['product_name']} has closed.")
    product = _product(ctx, line["sku"])
    if not product.get("returnable", True):
        raise ToolError("conflict", f"{product['name']} cannot be returned.")
    for ret in ctx.state.records("returns").values():
        if ret.get("line_id") == line["line_id"] and ret.get("status") != "rejected":
            raise ToolError("conflict", f"Return {ret['return_id']} is already open for this item.")
    resolution = args.get("resolution", "refund")
    exchange_sku = args.get("exchange_sku")
    if exchange_sku and resolution != "exchange":
        raise ToolError("invalid_request", "exchange_sku is only for resolution 'exchange'.")
    if resolution == "exchange":
        if not exchange_sku:
            raise ToolError("invalid_request", "An exchange needs exchange_sku, the variant you want instead.")
        wanted = _product(ctx, exchange_sku)
        if wanted["sku"] == product["sku"] or not product.get("variant_group") \
                or wanted.get("variant_group") != product.get("variant_group"):
            raise ToolError("conflict", f"{wanted['name']} is not another size or colour of {product['name']}.")
        if int(wanted.get("stock", 0)) < int(line.get("quantity", 1)):
            raise ToolError("conflict", f"{wanted['name']} is out of stock.")
    key = ctx.new_id("returns")
    ret = {"return_id": key, "order_id": line["order_id"], "line_id": line["line_id"],
           "item_name": line["product_name"], "reason": args["reason"], "resolution": resolution,
           "status": "label_sent", "created_at": ctx.now, "comment": args.get("comment", ""),
           "refund_amount": 0.0 if resolution == "exchange" else _money(line["unit_price"] * line.get("quantity", 1))}
    if exchange_sku:
        ret["exchange_sku"] = exchange_sku
    ctx.state.put("returns", key, ret)
    ctx.state.put("order_lines", line["line_id"], {**line, "status": "return_requested"})
    return {"created": ret, "label": f"A prepaid label for {ret['return_id']} was emailed to "
                                     f"{ctx.values.get('customer_email', 'you')}; drop off by {line['return_by']}."}
