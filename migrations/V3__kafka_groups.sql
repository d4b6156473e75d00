-- Offsets committed by Kafka clients' consumer groups over the Kafka-protocol listener, as Kafka keeps them
-- in __consumer_offsets: the next offset to consume, with the leader epoch and metadata string the client sent.
CREATE TABLE group_offsets (
    group_id     TEXT    NOT NULL,
    topic        TEXT    NOT NULL,
    partition    INTEGER NOT NULL,
    offset       INTEGER NOT NULL,
    leader_epoch INTEGER NOT NULL,
    metadata     TEXT,
    commit_ms    INTEGER NOT NULL,
    PRIMARY KEY (group_id, topic, partition)
) WITHOUT ROWID;
