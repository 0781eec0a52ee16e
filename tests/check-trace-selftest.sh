#!/bin/sh
# The oracle checker must catch a changed field, a missing event and a wrong payload.
exec python3 "$top_srcdir/tests/check_trace.py" --selftest
