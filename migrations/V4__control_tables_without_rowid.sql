-- The control plane's tables, keyed by connector, as WITHOUT ROWID tables: a row lives in its primary
-- key's b-tree alone instead of in a rowid table plus an index on the key, so creating, changing and
-- deleting a connector writes about half the pages it did. Same columns, same keys, same rows.

CREATE TABLE connector_configs_v4 (
    name       TEXT    NOT NULL PRIMARY KEY,
    config     TEXT    NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO connector_configs_v4 (name, config, created_ms, updated_ms)
    SELECT name, config, created_ms, updated_ms FROM connector_configs WHERE name IS NOT NULL;
DROP TABLE connector_configs;
ALTER TABLE connector_configs_v4 RENAME TO connector_configs;

CREATE TABLE target_states_v4 (
    connector TEXT NOT NULL PRIMARY KEY,
    state     TEXT NOT NULL,
    state_v2  TEXT
) WITHOUT ROWID;
INSERT INTO target_states_v4 (connector, state, state_v2)
    SELECT connector, state, state_v2 FROM target_states WHERE connector IS NOT NULL;
DROP TABLE target_states;
ALTER TABLE target_states_v4 RENAME TO target_states;

CREATE TABLE task_configs_v4 (
    connector TEXT    NOT NULL,
    task      INTEGER NOT NULL,
    config    TEXT    NOT NULL,
    PRIMARY KEY (connector, task)
) WITHOUT ROWID;
INSERT INTO task_configs_v4 (connector, task, config)
    SELECT connector, task, config FROM task_configs;
DROP TABLE task_configs;
ALTER TABLE task_configs_v4 RENAME TO task_configs;

CREATE TABLE task_counts_v4 (
    connector TEXT    NOT NULL PRIMARY KEY,
    tasks     INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO task_counts_v4 (connector, tasks)
    SELECT connector, tasks FROM task_counts WHERE connector IS NOT NULL;
DROP TABLE task_counts;
ALTER TABLE task_counts_v4 RENAME TO task_counts;

CREATE TABLE connector_statuses_v4 (
    connector  TEXT    NOT NULL PRIMARY KEY,
    state      TEXT    NOT NULL,
    trace      TEXT,
    worker_id  TEXT    NOT NULL,
    updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO connector_statuses_v4 (connector, state, trace, worker_id, updated_ms)
    SELECT connector, state, trace, worker_id, updated_ms FROM connector_statuses
    WHERE connector IS NOT NULL;
DROP TABLE connector_statuses;
ALTER TABLE connector_statuses_v4 RENAME TO connector_statuses;

CREATE TABLE task_statuses_v4 (
    connector  TEXT    NOT NULL,
    task       INTEGER NOT NULL,
    state      TEXT    NOT NULL,
    trace      TEXT,
    worker_id  TEXT    NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (connector, task)
) WITHOUT ROWID;
INSERT INTO task_statuses_v4 (connector, task, state, trace, worker_id, updated_ms)
    SELECT connector, task, state, trace, worker_id, updated_ms FROM task_statuses;
DROP TABLE task_statuses;
ALTER TABLE task_statuses_v4 RENAME TO task_statuses;
