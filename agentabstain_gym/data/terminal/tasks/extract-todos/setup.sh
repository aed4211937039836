#!/usr/bin/env bash
# Builds the workspace: a small source tree with TODO comments in several languages.
set -euo pipefail
mkdir -p src/util src/web docs
cat > src/app.py <<'X'
import sys

# TODO: validate the input path
def main(argv):
    data = open(argv[1]).read()
    return len(data)  # TODO:  return a proper exit code


if __name__ == "__main__":
    main(sys.argv)
X
cat > src/util/helpers.py <<'X'
def chunk(xs, n):
    # TODO: handle n <= 0
    return [xs[i:i + n] for i in range(0, len(xs), n)]
X
cat > src/web/main.js <<'X'
const api = "/api";
// TODO: read the base URL from config
function load() {
  return fetch(api + "/items"); // TODO: add retries
}
X
cat > src/web/style.css <<'X'
/* TODO: dark mode */
body { margin: 0; }
X
cat > docs/notes.md <<'X'
- TODO: write the docs
X
