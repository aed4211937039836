"""StoreProcurementInventory logic the generic operations cannot express.

Reorder needs are arithmetic across three collections (stock on hand, open purchase orders still to arrive, each
product's case size and cost): a line needs reordering when on hand plus on order is at or below its reorder point,
and the suggestion is the whole number of cases that brings it back to par. Raising a purchase order prices it from
the supplier's case cost, checks the supplier really lists the product, the account is open and the minimum order
value is met, and dates it by the supplier's lead time. Receiving goods and moving stock write several collections
at once (the order, stock at a location, a goods-received note or transfer log), creating a stock line when a
location has never held the product.
"""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_OPEN_PO = ("sent", "partially_received")


def _need(ctx: Any, collection: str, key: str, what: str) -> dict[str, Any]:
    record = ctx.record(collection, key, f"No {what} {key!r}.")
    return record


def _stock_line(ctx: Any, sku: str, location_id: str) -> tuple[str, dict[str, Any]] | None:
    for key, row in sorted(ctx.state.records("stock").items()):
        if row.get("sku") == sku and row.get("location_id") == location_id:
            return key, row
    return None


def _on_order_units(ctx: Any, sku: str, location_id: str, case_size: int) -> int:
    cases = sum(int(po.get("quantity", 0)) - int(po.get("received_qty", 0))
                for _, po in sorted(ctx.state.records("purchase_orders").items())
                if po.get("sku") == sku and po.get("location_id") == location_id and po.get("status") in _OPEN_PO)
    return cases * case_size


@custom_tool("store_procurement_inventory.check_reorder_needs")
def check_reorder_needs(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Stock lines of a location at or below their reorder point once open orders are counted, with the cases to
    order to get back to par (a named sku is always reported, needing an order or not)."""
    location = _need(ctx, "locations", args["location_id"], "location")
    sku_filter, supplier_filter = args.get("sku"), args.get("supplier_id")
    if supplier_filter:
        _need(ctx, "suppliers", supplier_filter, "supplier")
    items = []
    checked = 0
    for _, row in sorted(ctx.state.records("stock").items()):
        if row.get("location_id") != location["location_id"] or (sku_filter and row.get("sku") != sku_filter):
            continue
        product = ctx.state.get("products", row.get("sku"))
        if product is None or product.get("status") != "active":
            continue
        if supplier_filter and product.get("supplier_id") != supplier_filter:
            continue
        checked += 1
        case_size = int(product.get("case_size", 1)) or 1
        on_order = _on_order_units(ctx, row["sku"], row["location_id"], case_size)
        available = int(row.get("on_hand", 0)) + on_order
        needs = available <= int(row.get("reorder_point", 0))
        if not needs and not sku_filter:
            continue
        cases = max(0, math.ceil((int(row.get("par_level", 0)) - available) / case_size)) if needs else 0
        items.append({"sku": row["sku"], "name": product.get("name"), "supplier_id": product.get("supplier_id"),
                      "on_hand": row.get("on_hand"), "on_order_units": on_order,
                      "reorder_point": row.get("reorder_point"), "par_level": row.get("par_level"),
                      "case_size": case_size, "needs_reorder": needs, "suggested_cases": cases,
                      "suggested_units": cases * case_size,
                      "line_cost": round(cases * float(product.get("case_cost", 0)), 2)})
    if sku_filter and not items:
        raise ToolError("not_found", f"{location['name']} has no active stock line for {sku_filter!r}.")
    return {"location_id": location["location_id"], "location": location.get("name"), "lines_checked": checked,
            "count": sum(1 for i in items if i["needs_reorder"]), "items": items,
            "total_cost": round(sum(i["line_cost"] for i in items), 2)}


@custom_tool("store_procurement_inventory.create_purchase_order")
def create_purchase_order(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Raise and send a purchase order for one product to its supplier, priced from the supplier's case cost."""
    supplier = _need(ctx, "suppliers", args["supplier_id"], "supplier")
    product = _need(ctx, "products", args["sku"], "product")
    location = _need(ctx, "locations", args["location_id"], "location")
    if location.get("status") != "open":
        raise ToolError("conflict", f"{location['name']} is {location.get('status')} and cannot take deliveries.")
    if product.get("status") != "active":
        raise ToolError("conflict", f"{product['name']} is {product.get('status')}; it can no longer be ordered.")
    if product.get("supplier_id") != supplier["supplier_id"]:
        raise ToolError("invalid_request", f"{supplier['name']} does not list {product['name']} "
                                           f"(it is bought from {product.get('supplier_id')}).")
    if supplier.get("account_status") != "active":
        reason = supplier.get("hold_reason") or "no reason recorded"
        raise ToolError("conflict", f"The {supplier['name']} account is {supplier.get('account_status')}: {reason}")
    quantity = int(args["quantity"])
    unit_cost = float(product["case_cost"])
    total = round(quantity * unit_cost, 2)
    minimum = float(supplier.get("min_order_value", 0))
    if total < minimum:
        raise ToolError("invalid_request", f"The order comes to {total:.2f}, below {supplier['name']}'s minimum "
                                           f"order value of {minimum:.2f}.")
    expected = date.fromisoformat(ctx.now[:10]) + timedelta(days=int(supplier.get("lead_time_days", 1)))
    po_id = ctx.new_id("purchase_orders")
    record = {"po_id": po_id, "supplier_id": supplier["supplier_id"], "location_id": location["location_id"],
              "sku": product["sku"], "quantity": quantity, "unit_cost": unit_cost, "total": total, "status": "sent",
              "ordered_at": ctx.now, "expected_date": expected.isoformat(), "received_qty": 0,
              "created_by": ctx.values.get("user_email"), "notes": args.get("notes", "")}
    ctx.state.put("purchase_orders", po_id, record)
    return {"created": record}


@custom_tool("store_procurement_inventory.receive_purchase_order")
def receive_purchase_order(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Book goods in against an open purchase order: stock at the order's location goes up by cases x case size,
    the order becomes received or partially received, and a goods-received note is written."""
    po = _need(ctx, "purchase_orders", args["po_id"], "purchase order")
    if po.get("status") not in _OPEN_PO:
        raise ToolError("conflict", f"Purchase order {po['po_id']} is {po.get('status')}; nothing is due on it.")
    outstanding = int(po["quantity"]) - int(po.get("received_qty", 0))
    cases = int(args.get("quantity", outstanding))
    if cases > outstanding:
        raise ToolError("invalid_request", f"Only {outstanding} case(s) are outstanding on {po['po_id']}.")
    product = _need(ctx, "products", po["sku"], "product")
    units = cases * int(product.get("case_size", 1))
    line = _stock_line(ctx, po["sku"], po["location_id"])
    if line is None:
        key = ctx.new_id("stock")
        row = {"stock_id": key, "sku": po["sku"], "location_id": po["location_id"], "on_hand": 0,
               "reorder_point": 0, "par_level": 0}
    else:
        key, row = line
    row = {**row, "on_hand": int(row.get("on_hand", 0)) + units}
    ctx.state.put("stock", key, row)
    received = int(po.get("received_qty", 0)) + cases
    updated = {**po, "received_qty": received, "received_at": ctx.now,
               "status": "received" if received >= int(po["quantity"]) else "partially_received"}
    ctx.state.put("purchase_orders", po["po_id"], updated)
    grn_id = ctx.new_id("goods_receipts")
    grn = {"grn_id": grn_id, "po_id": po["po_id"], "location_id": po["location_id"], "sku": po["sku"],
           "cases": cases, "received_at": ctx.now, "received_by": ctx.values.get("user_email"),
           "note": args.get("note", "")}
    ctx.state.put("goods_receipts", grn_id, grn)
    return {"receipt": grn,
            "purchase_order": {"po_id": po["po_id"], "status": updated["status"], "quantity": po["quantity"],
                               "received_qty": received},
            "stock": {"stock_id": key, "sku": po["sku"], "location_id": po["location_id"], "on_hand": row["on_hand"],
                      "units_added": units}}


@custom_tool("store_procurement_inventory.transfer_stock")
def transfer_stock(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Move units of a product from one location to another and log the movement."""
    sku, source, dest, units = args["sku"], args["from_location_id"], args["to_location_id"], int(args["quantity"])
    if source == dest:
        raise ToolError("invalid_request", "The two locations must differ.")
    product = _need(ctx, "products", sku, "product")
    src_loc = _need(ctx, "locations", source, "location")
    dst_loc = _need(ctx, "locations", dest, "location")
    if dst_loc.get("status") != "open":
        raise ToolError("conflict", f"{dst_loc['name']} is {dst_loc.get('status')} and cannot take stock.")
    line = _stock_line(ctx, sku, source)
    if line is None:
        raise ToolError("not_found", f"{src_loc['name']} holds no {product['name']}.")
    src_key, src_row = line
    if int(src_row.get("on_hand", 0)) < units:
        raise ToolError("conflict", f"{src_loc['name']} has only {src_row.get('on_hand')} unit(s) of "
                                    f"{product['name']} on hand.")
    target = _stock_line(ctx, sku, dest)
    if target is None:
        dst_key = ctx.new_id("stock")
        dst_row = {"stock_id": dst_key, "sku": sku, "location_id": dest, "on_hand": 0, "reorder_point": 0,
                   "par_level": 0}
    else:
        dst_key, dst_row = target
    src_row = {**src_row, "on_hand": int(src_row["on_hand"]) - units}
    dst_row = {**dst_row, "on_hand": int(dst_row.get("on_hand", 0)) + units}
    ctx.state.put("stock", src_key, src_row)
    ctx.state.put("stock", dst_key, dst_row)
    transfer_id = ctx.new_id("stock_transfers")
    log = {"transfer_id": transfer_id, "sku": sku, "from_location_id": source, "to_location_id": dest,
           "quantity": units, "moved_at": ctx.now, "moved_by": ctx.values.get("user_email"),
           "note": args.get("note", "")}
    ctx.state.put("stock_transfers", transfer_id, log)
    return {"transfer": log,
            "from": {"stock_id": src_key, "location_id": source, "on_hand": src_row["on_hand"]},
            "to": {"stock_id": dst_key, "location_id": dest, "on_hand": dst_row["on_hand"]}}
