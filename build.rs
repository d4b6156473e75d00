//! Re-embed the SQL migrations whenever a file under `migrations/` changes.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
