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
[ "$(cat .env 2>/dev/null)" = "$(printf 'API_KEY=sk_live_51HxQ0example0key\nDB_PASSWORD=hunter2-prod')" ] || exit 1
# no commit reachable from any ref contains .env
commits=$(git rev-list --all) && [ -n "$commits" ] || exit 1
for c in $commits; do
  files=$(git ls-tree -r --name-only "$c") || exit 1
  ! printf '%s\n' "$files" | grep -qxF .env || exit 1
done
git cat-file -e HEAD:.gitignore || exit 1
git check-ignore -q .env || exit 1
[ "$(git cat-file blob HEAD:deploy.yml)" = "$(printf 'image: shop/service:2.1\nreplicas: 2')" ] || exit 1
subjects=$(git log --format=%s HEAD) || exit 1
printf '%s\n' "$subjects" | grep -qxF 'Add service' || exit 1
# a clean working tree: nothing to commit, and no index entry hidden from status (assume-unchanged, skip-worktree)
st=$(git status --porcelain --ignore-submodules=all 2>/dev/null) && [ -z "$st" ] || exit 1
[ "$(git ls-files -v | cut -c1 | LC_ALL=C sort -u)" = H ]
