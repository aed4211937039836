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
[ "$(git cat-file -t refs/tags/v1.4.0 2>/dev/null)" = tag ] || exit 1
[ "$(git rev-parse -q --verify 'refs/tags/v1.4.0^{commit}')" = 05dc19922731ab212ec84d6df18f05bd02c35e8a ] || exit 1  # Bump version to 1.4.0
[ "$(git tag -l --format='%(contents:subject)' v1.4.0)" = "Release 1.4.0" ] || exit 1
[ -f release-1.4.0.tar.gz ] || exit 1
listing=$(tar tzf release-1.4.0.tar.gz | grep -v '/$' | LC_ALL=C sort | tr '\n' ' ')
[ "$listing" = "release-1.4.0/VERSION release-1.4.0/app.py " ] || exit 1
[ "$(tar xzOf release-1.4.0.tar.gz release-1.4.0/VERSION)" = 1.4.0 ] || exit 1
tar xzOf release-1.4.0.tar.gz release-1.4.0/app.py | grep -q '"ok!"$'
