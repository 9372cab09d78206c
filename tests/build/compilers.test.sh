# The whole tree, unit tests included, builds without a warning under clang too (-Wall -Wextra
# -Werror; the suite itself runs on the gcc build). Incremental: the second run is quick.
. tests/lib.sh
if out=$(make -s -j"$(nproc)" CC=clang BUILD=build-clang all unit 2>&1); then
	pass builds_warning_free_with_clang
else
	fail builds_warning_free_with_clang "$(grep -m3 -E 'error|warning' <<<"$out")"
fi
