#!/bin/sh
# Rewrites the `expect` of every tests/solana/fixtures/*.json from LiteSVM, the Solana
# runtime (fixture.mjs), never from tally; with --check, only says which differ (exit 1).
# Needs the corpus's programs (SBPF_CORPUS, default ../shared/corpus/sbpf) and the npm
# oracles that scripts/install-deps.sh installs into .deps/npm.
set -eu
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
CORPUS=${SBPF_CORPUS:-$ROOT/../shared/corpus/sbpf}
[ -d "$CORPUS/programs" ] || { echo "regen-expect: no corpus at $CORPUS/programs" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tally-regen.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cp "$ROOT"/tests/solana/fixtures/*.json "$TMP/"
ln -s "$CORPUS/programs" "$TMP/programs"
NODE_PATH="$ROOT/.deps/npm/node_modules" node "$ROOT/tests/solana/litesvm/expect.mjs" "$@" "$TMP"/*.json
[ "${1:-}" = --check ] || cp "$TMP"/*.json "$ROOT/tests/solana/fixtures/"
