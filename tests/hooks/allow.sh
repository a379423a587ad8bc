#!/bin/sh
# Says nothing: the call goes on.
cat > /dev/null
echo "{}"
