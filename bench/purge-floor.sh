#!/bin/bash
# The floor of an OpenCode purge: the SQL statements agentgc runs to purge one session of a
# database in the fixture's schema (OpenCode 1.18.33), run by the sqlite3 shell in one process
# with the same pragmas, in the same order, and nothing else (no discovery of files, no gate,
# no change watch). What agentgc costs beyond this is its own.
#   bench/purge-floor.sh DB SESSION_ID
# DB is changed: the session's rows go, as with `agentgc purge opencode SESSION_ID`. Exit 0
# when every statement ran.
#
# The statements, as src/lib/purge.c and src/lib/adapters/opencode.c run them for a session
# without children:
#   discovery, read-only: its children by parent_id, then every row set counted through the
#     indexes (count(*), no bytes: a purge sizes rows as it deletes them);
#   the write, one connection: secure_delete, foreign keys, synchronous=NORMAL, a 32 MiB
#     cache, the 200 ms busy timeout, the automatic checkpoint off; BEGIN IMMEDIATE (WAL);
#     the planned message ids read for the change watch; each row set, in the order
#     db_rowsets gives (a table before the tables it references), sized (the sum of the
#     stored size of its rows, SPEC "Sizes") and deleted; COMMIT; wal_checkpoint(TRUNCATE);
#   the residual: every row set counted again.
# Row sets discovery finds empty are not deleted (purge.c skips them): the delete of such a
# set here deletes nothing and costs an index probe.
set -euo pipefail
if [[ $# -ne 2 ]]; then
	echo "usage: bench/purge-floor.sh DB SESSION_ID" >&2
	exit 2
fi
db=$1
id=$2
# the id goes into the SQL text: only the characters of OpenCode's ids
if [[ ! $id =~ ^ses_[A-Za-z0-9]{1,64}$ ]]; then
	echo "bench/purge-floor.sh: '$id' is not an OpenCode session id" >&2
	exit 2
fi
if [[ ! -f $db ]]; then
	echo "bench/purge-floor.sh: no database '$db'" >&2
	exit 2
fi
ids="json_each('[\"$id\"]')"

# The stored size of a row: every column's value as bytes (agc_db_row_size_sql), read from the
# database's own schema so it is the expression agentgc builds.
size_expr() {
	local t=$1 c e="(0"
	for c in $2; do
		e+=" + ifnull(length(CAST(\"$c\" AS BLOB)), 0)"
	done
	echo "$e)"
}

# table, its WHERE on the session, and its columns, in agentgc's order
rowsets=(
	"event|\"aggregate_id\" IN (SELECT value FROM $ids)|id aggregate_id seq type data"
	"event_sequence|\"aggregate_id\" IN (SELECT value FROM $ids)|aggregate_id seq owner_id"
	"part|\"session_id\" IN (SELECT value FROM $ids) OR \"message_id\" IN (SELECT \"id\" FROM \"message\" WHERE \"session_id\" IN (SELECT value FROM $ids))|id message_id session_id time_created time_updated data"
	"message|\"session_id\" IN (SELECT value FROM $ids)|id session_id time_created time_updated data"
	"plugin_notes|\"session_id\" IN (SELECT value FROM $ids)|session_id note"
	"session_context_epoch|\"session_id\" IN (SELECT value FROM $ids)|session_id baseline snapshot baseline_seq"
	"session_input|\"session_id\" IN (SELECT value FROM $ids)|id session_id prompt delivery admitted_seq promoted_seq time_created"
	"session_message|\"session_id\" IN (SELECT value FROM $ids)|id session_id type seq time_created time_updated data"
	"session_share|\"session_id\" IN (SELECT value FROM $ids)|session_id id secret url time_created time_updated"
	"todo|\"session_id\" IN (SELECT value FROM $ids)|session_id content status priority position time_created time_updated"
	"session|\"id\" IN (SELECT value FROM $ids)|id project_id workspace_id parent_id slug directory path title version share_url summary_additions summary_deletions summary_files summary_diffs metadata cost tokens_input tokens_output tokens_reasoning tokens_cache_read tokens_cache_write revert permission agent model time_created time_updated time_compacting time_archived"
)

counts=
deletes=
for rs in "${rowsets[@]}"; do
	IFS='|' read -r t where cols <<<"$rs"
	counts+="SELECT count(*) FROM \"$t\" WHERE $where;"$'\n'
	deletes+="SELECT coalesce(sum($(size_expr "$t" "$cols")), 0) FROM \"$t\" WHERE $where;"$'\n'
	deletes+="DELETE FROM \"$t\" WHERE $where;"$'\n'
done

sqlite3 -bail "$db" <<EOF
.output /dev/null
.timeout 200
SELECT count(*) FROM sqlite_master;
SELECT "id" FROM "session" WHERE "parent_id" IN (SELECT value FROM $ids);
$counts
PRAGMA secure_delete=ON;
PRAGMA foreign_keys=ON;
PRAGMA synchronous=NORMAL;
PRAGMA cache_size=-32768;
PRAGMA journal_mode;
BEGIN IMMEDIATE;
PRAGMA wal_autocheckpoint=0;
SELECT "id" FROM "message" WHERE "session_id" IN (SELECT value FROM $ids);
$deletes
COMMIT;
PRAGMA wal_autocheckpoint=1000;
PRAGMA wal_checkpoint(TRUNCATE);
$counts
EOF
