#!/bin/sh
# Fails with a diagnostic on stderr.
cat > /dev/null
echo "config file missing; token=sk-test-4f1c9e" >&2
exit 3
