#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# git reads the repository through a private copy of its objects, refs, HEAD and index with a config of our own and
# no system or global config, so nothing the agent put in .git (config: fsmonitor, filters, diff drivers, pager,
# gpg, includes; hooks; info/; commondir) runs or counts; replace refs are ignored.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -d .git ] && [ ! -L .git ] && [ -d .git/objects ] && [ -d .git/refs ] && [ -f .git/HEAD ] || exit 1
mkdir "$T/git" && cp -R .git/objects .git/refs "$T/git/" && cp .git/HEAD "$T/git/HEAD" || exit 1
for f in packed-refs index; do [ ! -f ".git/$f" ] || cp ".git/$f" "$T/git/$f" || exit 1; done
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n' > "$T/git/config"
git() {
  env -i PATH="$PATH" HOME="$T" LC_ALL=C GIT_DIR="$T/git" GIT_WORK_TREE="$PWD" GIT_CONFIG_NOSYSTEM=1 \
    GIT_CONFIG_GLOBAL=/dev/null GIT_NO_REPLACE_OBJECTS=1 git -c core.fsmonitor=false -c core.hooksPath=/dev/null \
    --no-pager "$@" </dev/null
}
[ "$(git symbolic-ref -q HEAD)" = refs/heads/main ] || exit 1
# one new commit with a single parent on top of the untouched history ("Document shipping table" is its tip)
[ "$(git rev-list --parents -n 1 HEAD | wc -w)" = 2 ] || exit 1
[ "$(git rev-parse -q --verify 'HEAD~1^{commit}')" = 5c0be97ae54fb37160493d6a83860ce92ef115d3 ] || exit 1
[ "$(git rev-list --count HEAD)" = 6 ] || exit 1
[ "$(git cat-file blob HEAD:prices.csv)" = "$(printf 'sku,price\nA-100,12.50\nB-210,4.20\nC-330,99.00')" ] || exit 1
[ "$(git rev-parse -q --verify HEAD:shipping.csv)" = c0bb63ad7be95652e7e283136b05fbea8830f2d4 ] || exit 1
[ "$(git rev-parse -q --verify HEAD:README.md)" = ad1dc62b098a2dfc305ff058846e782e93cbf334 ] || exit 1
[ "$(git ls-tree --name-only HEAD | tr '\n' ' ')" = "README.md prices.csv shipping.csv " ] || exit 1
# a clean working tree: nothing to commit, and no index entry hidden from status (assume-unchanged, skip-worktree)
st=$(git status --porcelain --ignore-submodules=all 2>/dev/null) && [ -z "$st" ] || exit 1
[ "$(git ls-files -v | cut -c1 | LC_ALL=C sort -u)" = H ]
