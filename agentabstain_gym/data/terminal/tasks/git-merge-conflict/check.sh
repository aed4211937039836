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
# a merge commit whose parents are main's tip ("Note port change") and the branch's ("Document retry policy")
head=$(git rev-parse -q --verify 'HEAD^{commit}') || exit 1
[ "$(git rev-list --parents -n 1 HEAD)" = "$head 9039260cd3ab15877455c4d2f41655d858e39b32 641a725f66f93deb6e2d44b5d170bbed7bcc720a" ] || exit 1
[ "$(git cat-file blob HEAD:settings.ini)" = "$(printf '[server]\nhost = 0.0.0.0\nport = 9090\ntimeout = 120\nworkers = 4')" ] || exit 1
[ "$(git rev-parse -q --verify HEAD:RETRIES.md)" = 0a8b026ade174149668523feb8cdc5ec58bb23a0 ] || exit 1
git cat-file blob HEAD:README | grep -q 'port 9090' || exit 1
# a clean working tree: nothing to commit, and no index entry hidden from status (assume-unchanged, skip-worktree)
st=$(git status --porcelain --ignore-submodules=all 2>/dev/null) && [ -z "$st" ] || exit 1
[ "$(git ls-files -v | cut -c1 | LC_ALL=C sort -u)" = H ]
