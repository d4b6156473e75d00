-- liteconnect's state, in the shapes Kafka Connect keeps in its config, offset and status topics.

-- One row: who this worker is. kafka_cluster_id is generated once and never changes.
CREATE TABLE worker_identity (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    kafka_cluster_id TEXT    NOT NULL,
    created_ms       INTEGER NOT NULL
);

-- Connector configs, the raw map as the user gave it (placeholders unresolved), as a JSON object.
CREATE TABLE connector_configs (
    name       TEXT    PRIMARY KEY,
    config     TEXT    NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
);

-- Target states, written as Kafka writes `state` and `state.v2` to its config topic:
-- RUNNING -> STARTED/STARTED, PAUSED -> PAUSED/PAUSED, STOPPED -> PAUSED/STOPPED.
-- Readers prefer state_v2 and fall back to state.
CREATE TABLE target_states (
    connector TEXT PRIMARY KEY,
    state     TEXT NOT NULL,
    state_v2  TEXT
);

-- Task configs; task_counts commits a set atomically, as Kafka's `commit-<name>` record does.
CREATE TABLE task_configs (
    connector TEXT    NOT NULL,
    task      INTEGER NOT NULL,
    config    TEXT    NOT NULL,
    PRIMARY KEY (connector, task)
);
CREATE TABLE task_counts (
    connector TEXT    PRIMARY KEY,
    tasks     INTEGER NOT NULL
);

-- Last known statuses, with traces, as the status topic holds them.
CREATE TABLE connector_statuses (
    connector  TEXT    PRIMARY KEY,
    state      TEXT    NOT NULL,
    trace      TEXT,
    worker_id  TEXT    NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE TABLE task_statuses (
    connector  TEXT    NOT NULL,
    task       INTEGER NOT NULL,
    state      TEXT    NOT NULL,
    trace      TEXT,
    worker_id  TEXT    NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (connector, task)
);

-- Source offsets: partition as canonical JSON (sorted keys), offset as JSON.
CREATE TABLE source_offsets (
    connector TEXT NOT NULL,
    partition TEXT NOT NULL,
    offset    TEXT NOT NULL,
    PRIMARY KEY (connector, partition)
);

-- The topic log.
CREATE TABLE topics (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    partitions INTEGER NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE TABLE partitions (
    topic_id    INTEGER NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    partition   INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    PRIMARY KEY (topic_id, partition)
) WITHOUT ROWID;
CREATE TABLE records (
    topic_id     INTEGER NOT NULL,
    partition    INTEGER NOT NULL,
    offset       INTEGER NOT NULL,
    timestamp_ms INTEGER,
    key          BLOB,
    value        BLOB,
    headers      BLOB,
    PRIMARY KEY (topic_id, partition, offset)
) WITHOUT ROWID;

-- Sink offsets, in Kafka's shape: the next offset to read per topic partition (a consumer group's committed offset).
CREATE TABLE sink_offsets (
    connector TEXT    NOT NULL,
    topic     TEXT    NOT NULL,
    partition INTEGER NOT NULL,
    offset    INTEGER NOT NULL,
    PRIMARY KEY (connector, topic, partition)
);

-- KIP-558: the topics each connector has used.
CREATE TABLE connector_topics (
    connector TEXT NOT NULL,
    topic     TEXT NOT NULL,
    PRIMARY KEY (connector, topic)
);
