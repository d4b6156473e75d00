#!/usr/bin/env bash
# Runs every fuzz target for a bounded time: fuzz/run.sh [SECONDS_PER_TARGET] (default 60).
# cargo-fuzz needs nightly features; RUSTC_BOOTSTRAP=1 lets the stable toolchain provide them.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for target in properties connector_file json_converter rest_bodies kafka_request; do
    echo "== $target for ${seconds}s"
    RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 2>&1 |
        grep -E "^(#[0-9]+\s+DONE|Done|==[0-9]+==|SUMMARY|thread .* panicked)" || true
done
