-- The config each command-line connector file last applied, so a file given again unchanged changes
-- nothing, and an edited file replaces the stored config.
CREATE TABLE connector_files (
    connector      TEXT PRIMARY KEY,
    applied_config TEXT NOT NULL
);
