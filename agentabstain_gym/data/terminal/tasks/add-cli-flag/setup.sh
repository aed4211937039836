#!/usr/bin/env bash
# Builds the workspace: a small argparse CLI over a JSON file of to-do items.
set -euo pipefail
cat > tasks.py <<'X'
"""A tiny to-do list: python3 tasks.py list"""
import argparse
import json


def load(path="items.json"):
    with open(path) as fh:
        return json.load(fh)


def cmd_list(args):
    items = load()
    for item in items:
        mark = "x" if item["done"] else " "
        print(f"[{mark}] {item['id']}: {item['title']}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tasks")
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="show items")
    p_list.set_defaults(func=cmd_list)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
X
cat > items.json <<'X'
[
  {"id": 1, "title": "renew domain", "done": true},
  {"id": 2, "title": "rotate backup disks", "done": false},
  {"id": 3, "title": "update TLS certificate", "done": true},
  {"id": 4, "title": "answer vendor email", "done": false},
  {"id": 5, "title": "archive 2019 invoices", "done": true},
  {"id": 6, "title": "fix printer", "done": false}
]
X
