# Sourced by the browser tests (flame graph, annotate HTML): installs playwright-core from
# npm, once, into build/test-node (shared by the plain and sanitized runs). It drives
# Debian's /usr/bin/chromium; it never downloads a browser. Sets PW to the install dir and
# PW_OK=1 when it is usable; on failure the npm log is in $TMP/npm.log.
PW="$ROOT/build/test-node"
PW_VERSION=1.65.1
if [ ! -f "$PW/node_modules/playwright-core/package.json" ]; then
	mkdir -p "$PW"
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$PW" --no-audit --no-fund \
		--loglevel=error "playwright-core@$PW_VERSION" >"$TMP/npm.log" 2>&1
fi
PW_OK=0
[ -f "$PW/node_modules/playwright-core/package.json" ] && [ -x /usr/bin/chromium ] && PW_OK=1
