#!/bin/sh
# Fails with a diagnostic on stderr.
cat > /dev/null
echo "config file missing" >&2
exit 3
