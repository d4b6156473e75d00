-- The embedded Schema Registry (schema.registry.listeners): schemas by global ID, the versions of each
-- subject, the references between them, and the compatibility level and mode, globally and per subject.

-- Every schema ever registered, under its global ID. A row is never deleted, so an ID is never given to
-- another schema, even after every version using it was permanently deleted; `fingerprint` (the type,
-- the schema's canonical text and its references) finds the ID of a schema registered before.
CREATE TABLE registry_schemas (
    id          INTEGER NOT NULL PRIMARY KEY,
    schema_type TEXT    NOT NULL,
    schema      TEXT    NOT NULL,
    refs        TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL
);
CREATE INDEX registry_schemas_fingerprint ON registry_schemas (fingerprint);

-- The versions of each subject; `deleted` marks a soft-deleted version (a permanent delete removes it).
CREATE TABLE registry_versions (
    subject    TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    schema_id  INTEGER NOT NULL REFERENCES registry_schemas (id),
    deleted    INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (subject, version)
) WITHOUT ROWID;
CREATE INDEX registry_versions_schema ON registry_versions (schema_id);

-- What each schema references: (schema, reference name) to a subject's version.
CREATE TABLE registry_references (
    schema_id   INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    ref_subject TEXT    NOT NULL,
    ref_version INTEGER NOT NULL,
    PRIMARY KEY (schema_id, name)
) WITHOUT ROWID;
CREATE INDEX registry_references_target ON registry_references (ref_subject, ref_version);

-- The compatibility level and mode: the global ones under the subject '' and each subject's own.
CREATE TABLE registry_config (
    subject       TEXT NOT NULL PRIMARY KEY,
    compatibility TEXT,
    mode          TEXT
) WITHOUT ROWID;
