# Sourced by the browser tests (flame graph, annotate HTML): playwright-core, which
# scripts/install-deps.sh puts in $NPM_DIR, drives Debian's /usr/bin/chromium. Sets PW to
# the folder that holds node_modules/playwright-core and PW_OK=1 when it is usable.
PW="$NPM_DIR"
PW_OK=0
[ -f "$PW/node_modules/playwright-core/package.json" ] && [ -x /usr/bin/chromium ] && PW_OK=1
