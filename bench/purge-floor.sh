#!/bin/sh
# The floor an OpenCode purge is measured against: the deletes of one session's rows run by
# the sqlite3 shell with agentgc's pragmas (db.c), in one transaction, then the checkpoint.
# A minimal version (a root session without children); it knows nothing of the checks
# agentgc makes around them.
#   bench/purge-floor.sh DB SESSION_ID
set -eu
[ $# -eq 2 ] || { echo "usage: bench/purge-floor.sh DB SESSION_ID" >&2; exit 2; }
case $2 in *"'"*) echo "purge-floor.sh: bad session id" >&2; exit 2 ;; esac
sqlite3 -bail "$1" <<SQL >/dev/null
PRAGMA busy_timeout=5000;
PRAGMA secure_delete=ON;
PRAGMA foreign_keys=ON;
PRAGMA synchronous=NORMAL;
PRAGMA cache_size=-32768;
BEGIN IMMEDIATE;
DELETE FROM part WHERE session_id = '$2';
DELETE FROM message WHERE session_id = '$2';
DELETE FROM todo WHERE session_id = '$2';
DELETE FROM session_share WHERE session_id = '$2';
DELETE FROM session_message WHERE session_id = '$2';
DELETE FROM session_input WHERE session_id = '$2';
DELETE FROM session_context_epoch WHERE session_id = '$2';
DELETE FROM session WHERE id = '$2';
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
