#!/bin/sh
# Answers something that is not JSON.
cat > /dev/null
echo "all good!"
