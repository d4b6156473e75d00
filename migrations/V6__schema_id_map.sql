-- Schema IDs translated between this worker's Schema Registry and another one: the Kafka sink's
-- `destination.schema.registry.url` ('out': a local ID to the destination's) and the mirror source's
-- `source.schema.registry.url` ('in': the source registry's ID to a local one). A row is written once the
-- other side answered the ID, so a schema is registered there once, whatever restarts follow.
CREATE TABLE registry_id_map (
    direction TEXT    NOT NULL,
    registry  TEXT    NOT NULL,
    from_id   INTEGER NOT NULL,
    to_id     INTEGER NOT NULL,
    PRIMARY KEY (direction, registry, from_id)
) WITHOUT ROWID;
