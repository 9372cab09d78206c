#!/bin/bash
# Runs CMD as nobody, as an ordinary user would (no capabilities, HOME=HOME_DIR), for the
# tests and benchmarks of what tally does without privileges. nobody cannot enter /root,
# where pyenv keeps its builds: CMD gets a mount namespace of its own in which /root is a
# world-readable tmpfs holding only a bind of pyenv's root (the same paths, so that the
# interpreters' RUNPATHs still find libpython). Every step execs: CMD keeps this script's
# pid ($! of a background run is CMD's).
# usage (as root): scripts/as-nobody.sh HOME_DIR CMD...
set -eu
home=$1
shift
view=$home/.pyenv-view
mkdir -p "$view"
exec env PYENV_ROOT="${PYENV_ROOT:-/root/.pyenv}" VIEW="$view" HOME_DIR="$home" \
	unshare -m --propagation private sh -c '
	if [ "${PYENV_ROOT#/root/}" != "$PYENV_ROOT" ] && [ -d "$PYENV_ROOT" ]; then
		mount --bind "$PYENV_ROOT" "$VIEW" &&
		mount -t tmpfs -o mode=755 tally-root /root &&
		mkdir -p "$PYENV_ROOT" && mount --bind "$VIEW" "$PYENV_ROOT" || exit 125
	fi
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$HOME_DIR" "$@"' sh "$@"
