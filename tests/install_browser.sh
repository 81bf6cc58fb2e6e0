#!/usr/bin/env bash
# Installs Debian's Chromium and ChromeDriver for judgelab view's browser tests (tests/test_view_browser.py),
# only when they are missing. Run by tests/node/install.sh, which the README's test command and .ci/run both run.
# Without root or apt-get, or when the install fails, the browser tests skip and say why.
set -uo pipefail
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
    || echo "could not install chromium: the browser tests of judgelab view will skip"
else
  echo "chromium is missing (install Debian's chromium and chromium-driver): the browser tests of judgelab view will skip"
fi
exit 0
