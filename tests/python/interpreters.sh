# Sourced by the Python tests after tests/lib.sh. for_each_python FN NAME DEBIAN_TAG calls
# FN PYTHON TAG for each interpreter with its debug information: Debian's python3.11 with
# python3.11-dbg's file (TAG DEBIAN_TAG), then pyenv's 3.8, 3.9, 3.10, 3.12 and 3.13 (TAG
# py38, py39, ...; 3.13 reads its _Py_DebugOffsets). One that is missing is skipped as NAME
# (Debian's) or NAME_TAG, with the reason: a failure under CI.
for_each_python() {
	local fn=$1 name=$2
	if [ -x /usr/bin/python3.11 ] && [ -d /usr/lib/debug/.build-id ]; then
		"$fn" /usr/bin/python3.11 "$3"
	else
		skip "$name" "no /usr/bin/python3.11 with its debug information (python3.11-dbg)"
	fi
	pyenv_each "$name" "" "$fn" 3.8 3.9 3.10 3.12 3.13
}
