//! Java's string rules that config answers depend on: `String.trim`, `String.hashCode` and
//! `HashMap` iteration order.

/// Java's `String.trim()`: strips every character up to and including U+0020 from both ends,
/// which is not the same set as Rust's Unicode whitespace.
pub fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// Java's `String.hashCode` (over UTF-16 code units).
pub(super) fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// Orders distinct string keys the way a Java `HashMap`/`HashSet` with default capacity,
/// filled in the given order, iterates them. Some Kafka output (the case-insensitive option
/// list, converter validation results) comes straight out of such a map, so reproducing its
/// order keeps answers byte-identical.
pub(crate) fn java_hash_order<T>(items: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut capacity: usize = 16;
    while items.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let mask = (capacity - 1) as u32;
    let mut keyed: Vec<(u32, (String, T))> = items
        .into_iter()
        .map(|item| {
            let h = java_string_hash(&item.0) as u32;
            ((h ^ (h >> 16)) & mask, item)
        })
        .collect();
    // Stable: entries of one bucket keep their insertion order, as Java's resize split does.
    keyed.sort_by_key(|(bucket, _)| *bucket);
    keyed.into_iter().map(|(_, item)| item).collect()
}
