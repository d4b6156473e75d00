//! Re-embeds the SQL migrations whenever a file under `migrations/` changes, and records the source
//! revision (`LITECONNECT_COMMIT`, shown by `GET /`): the value of that variable when the build sets it,
//! else `git rev-parse HEAD` in a git checkout, else `unknown`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-env-changed=LITECONNECT_COMMIT");
    let commit = match std::env::var("LITECONNECT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => git_commit().unwrap_or_else(|| "unknown".into()),
    };
    println!("cargo:rustc-env=LITECONNECT_COMMIT={commit}");
}

/// Runs git in the package directory; None when git is missing or fails.
fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// The checked-out commit, when the package is a git checkout (`.git` a directory, or a file for a
/// worktree). Asks to be run again when `HEAD` moves: `HEAD` itself, the branch it points to, and the
/// packed refs where that branch may live instead.
fn git_commit() -> Option<String> {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    if !manifest.join(".git").exists() {
        return None;
    }
    let commit = git(&["rev-parse", "HEAD"])?;
    if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            let path = manifest.join(Path::new(&path));
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    Some(commit)
}
