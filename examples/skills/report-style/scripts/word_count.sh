#!/bin/sh
# Counts the words of the report a run saved.
wc -w report.md
