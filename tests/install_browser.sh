#!/usr/bin/env bash
# Installs Debian's Chromium and ChromeDriver for judgelab view's browser tests (tests/test_view_browser.py),
# only when they are missing. Run by tests/node/install.sh, which the README's test command and .ci/run both run.
# Without root or apt-get, or when the install fails, the browser tests skip and say why (under CI=true: fail).
set -uo pipefail
# A part that cannot be installed: under CI=true (.ci/run sets it) the install fails, so CI never passes with
# that part's tests skipped; elsewhere the tests skip with this line.
missing() { if [ "${CI:-}" = true ]; then echo "CI=true: $1" >&2; exit 1; fi; echo "$1"; exit 0; }
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
    || missing "could not install chromium: the browser tests of judgelab view will skip"
else
  missing "chromium is missing (install Debian's chromium and chromium-driver): the browser tests of judgelab view will skip"
fi
exit 0
