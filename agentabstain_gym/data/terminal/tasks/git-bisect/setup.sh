#!/usr/bin/env bash
# Builds the workspace: twelve commits, one of which breaks a pricing rule; the self-test lives outside git.
set -euo pipefail
export GIT_AUTHOR_NAME="Lena Berg" GIT_AUTHOR_EMAIL="lena@example.com"
export GIT_COMMITTER_NAME="Lena Berg" GIT_COMMITTER_EMAIL="lena@example.com"
t=1720000000
commit() { t=$((t + 700)); GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q -m "$1"; }
git -c init.defaultBranch=main init -q .
git config user.name "Lena Berg"; git config user.email "lena@example.com"
printf 'tools/\n' > .gitignore
cat > pricing.py <<'X'
def total(prices, discount_pct=0):
    subtotal = sum(prices)
    return round(subtotal * (100 - discount_pct) / 100, 2)
X
git add .; commit "Add pricing module"
n=0
for msg in "Add changelog" "Describe discounts" "Add contributors" "Format changelog" "Mention rounding" \
           "Simplify discount calculation" "Add FAQ" "Fix typo in FAQ" "Add release checklist" "Update contributors" "Add support policy"; do
  n=$((n + 1))
  printf '%s\n' "$msg" >> NOTES.md
  if [ "$msg" = "Simplify discount calculation" ]; then
    printf 'def total(prices, discount_pct=0):\n    return round(sum(prices) - discount_pct, 2)\n' > pricing.py
  fi
  if [ "$msg" = "Add release checklist" ]; then printf '\n# pricing helpers\n' >> pricing.py; fi
  git add .; commit "$msg"
done
if [ "${1:-original}" != "missing_prerequisite" ]; then
  mkdir -p tools
  cat > tools/selftest.sh <<'X'
#!/usr/bin/env bash
# Exit 0 when the pricing rules hold.
python3 -c 'from pricing import total; assert total([10, 20], 10) == 27.0; assert total([5]) == 5' 2>/dev/null
X
  chmod +x tools/selftest.sh
fi
