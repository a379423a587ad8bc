#!/bin/sh
# Adds a note for the model after the result.
cat > /dev/null
echo '{"feedback": "lint passed"}'
