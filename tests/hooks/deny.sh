#!/bin/sh
# Refuses every call it sees.
cat > /dev/null
echo '{"decision": "deny", "reason": "writes are frozen until Monday"}'
