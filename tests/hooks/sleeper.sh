#!/bin/sh
# Starts a child, records its pid in $1, then outlives any deadline.
sleep 60 &
echo $! > "$1"
sleep 60
