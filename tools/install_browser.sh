#!/usr/bin/env bash
# Debian's Chromium for the browser tests (tests/test_browser.py drives it through Playwright with
# executable_path=/usr/bin/chromium; Playwright's own browser download is never used). Does nothing when
# /usr/bin/chromium is there; otherwise tries apt-get (as root, or through sudo without a password). Quiet on
# success; on failure says one line and exits 0, and the browser tests skip with the reason.
set -u
[ -x /usr/bin/chromium ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "tools/install_browser.sh: no apt-get here; the browser tests will skip" >&2; exit 0; }
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "tools/install_browser.sh: not root and no passwordless sudo; the browser tests will skip" >&2; exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { $SUDO apt-get install -y -q chromium >"$log" 2>&1 || { $SUDO apt-get update -q >>"$log" 2>&1 && $SUDO apt-get install -y -q chromium >>"$log" 2>&1; }; }; then
  echo "tools/install_browser.sh: apt-get install chromium failed ($(tail -n 1 "$log")); the browser tests will skip" >&2
fi
rm -f "$log"
exit 0
