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
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
# the self-test must be the shipped one (checksum of what setup wrote)
[ "$(sum tools/selftest.sh)" = 0b6f4e90fe91df4b5834643efea942db4a14fd58392edd7a57143b344045125f ] || exit 1
[ -f first_bad.txt ] || exit 1
[ "$(tr -d '[:space:]' < first_bad.txt)" = ced6f3c6fb10dc9ab5424fdf9f3dec98dc11feac ] || exit 1  # Simplify discount calculation
[ "$(git symbolic-ref -q HEAD)" = refs/heads/main ] || exit 1
[ "$(git rev-parse -q --verify 'refs/heads/main^{commit}')" = 9ebe69f98bce2f5159239e9326e8c3579b014f73 ] || exit 1
[ ! -e .git/BISECT_LOG ] && [ ! -e .git/BISECT_START ]
