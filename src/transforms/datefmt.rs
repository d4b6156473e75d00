//! Java's `SimpleDateFormat` patterns, as `TimestampConverter.format` and
//! `TimestampRouter.timestamp.format` take them, formatting and parsing in UTC (Kafka sets the
//! format's time zone to UTC).
//!
//! Patterns are compiled the way Java compiles them (`Illegal pattern character 'x'`,
//! `Unterminated quote`) and then interpreted field by field, with chrono doing the calendar
//! arithmetic. Parsing follows `SimpleDateFormat.parse(String)` in its default lenient mode:
//! out-of-range fields roll over (month 13 is January of the next year), a numeric field followed
//! directly by another field takes exactly its pattern width (`yyyyMMdd`), a two-digit year read
//! with `yy` lands within 80 years before and 20 after now, and text after the last field is
//! ignored.
//!
//! Differences from Java: the proleptic Gregorian calendar is used throughout (Java switches to
//! the Julian calendar before 15 October 1582); names are English (Java uses the default
//! locale); the day of the week, `w`, `W`, `F` and `u` are checked but not used when parsing a
//! date; time zone names other than `UTC`, `GMT`, `UT` and `Z` (with optional offsets) are not
//! understood when parsing.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};

use crate::config::ConfigError;

const MILLIS_PER_DAY: i64 = 86_400_000;

/// The pattern letters Java knows (`SimpleDateFormat.patternChars`).
const PATTERN_LETTERS: &str = "GyMdkHmsSEDFwWahKzZYuXL";

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    Literal(String),
    Field { letter: char, count: usize },
}

/// A compiled `SimpleDateFormat` pattern working in UTC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateFormat {
    pattern: String,
    items: Vec<Item>,
}

impl DateFormat {
    /// Compiles a pattern.
    ///
    /// # Errors
    /// Java's `IllegalArgumentException` text: `Illegal pattern character 'x'` or
    /// `Unterminated quote`.
    pub fn new(pattern: &str) -> Result<DateFormat, ConfigError> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut items: Vec<Item> = Vec::new();
        let mut literal = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                if chars.get(i + 1) == Some(&'\'') {
                    literal.push('\'');
                    i += 2;
                    continue;
                }
                // quoted text up to the closing quote, with '' standing for one quote
                i += 1;
                let mut closed = false;
                while i < chars.len() {
                    if chars[i] == '\'' {
                        if chars.get(i + 1) == Some(&'\'') {
                            literal.push('\'');
                            i += 2;
                            continue;
                        }
                        closed = true;
                        i += 1;
                        break;
                    }
                    literal.push(chars[i]);
                    i += 1;
                }
                if !closed {
                    return Err("Unterminated quote".to_string().into());
                }
                continue;
            }
            if c.is_ascii_alphabetic() {
                if !PATTERN_LETTERS.contains(c) {
                    return Err(format!("Illegal pattern character '{c}'").into());
                }
                let mut count = 1;
                while chars.get(i + count) == Some(&c) {
                    count += 1;
                }
                if !literal.is_empty() {
                    items.push(Item::Literal(std::mem::take(&mut literal)));
                }
                items.push(Item::Field { letter: c, count });
                i += count;
                continue;
            }
            literal.push(c);
            i += 1;
        }
        if !literal.is_empty() {
            items.push(Item::Literal(literal));
        }
        Ok(DateFormat {
            pattern: pattern.to_string(),
            items,
        })
    }

    /// The pattern as given (Java's `toPattern()`).
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Formats epoch milliseconds in UTC.
    pub fn format(&self, millis: i64) -> String {
        let Some(t) = to_datetime(millis) else {
            return millis.to_string();
        };
        let mut out = String::new();
        for item in &self.items {
            match item {
                Item::Literal(s) => out.push_str(s),
                Item::Field { letter, count } => format_field(&mut out, &t, *letter, *count),
            }
        }
        out
    }

    /// Parses text into epoch milliseconds as Java's lenient `parse(String)` does; `None` where
    /// Java throws `ParseException`.
    pub fn parse(&self, text: &str) -> Option<i64> {
        let chars: Vec<char> = text.chars().collect();
        let mut pos = 0usize;
        let mut f = Fields::default();
        for (index, item) in self.items.iter().enumerate() {
            match item {
                Item::Literal(s) => {
                    for c in s.chars() {
                        if chars.get(pos) != Some(&c) {
                            return None;
                        }
                        pos += 1;
                    }
                }
                Item::Field { letter, count } => {
                    let obey_count = matches!(self.items.get(index + 1), Some(Item::Field { .. }));
                    pos = parse_field(&chars, pos, *letter, *count, obey_count, &mut f)?;
                }
            }
        }
        f.resolve()
    }
}

fn to_datetime(millis: i64) -> Option<NaiveDateTime> {
    chrono::DateTime::from_timestamp_millis(millis).map(|d| d.naive_utc())
}

fn pad(out: &mut String, value: i64, min_digits: usize) {
    let digits = value.unsigned_abs().to_string();
    if value < 0 {
        out.push('-');
    }
    for _ in digits.len()..min_digits {
        out.push('0');
    }
    out.push_str(&digits);
}

/// Sunday = 0 .. Saturday = 6, as Java's `Calendar.DAY_OF_WEEK - 1`.
fn dow_from_sunday(d: NaiveDate) -> i64 {
    i64::from(d.weekday().num_days_from_sunday())
}

/// Week of year and week-based year with the US rules Java's default locale uses (weeks start
/// on Sunday; week 1 is the week holding 1 January).
fn us_week(d: NaiveDate) -> (i64, i32) {
    let year = d.year();
    if let Some(next_jan1) = NaiveDate::from_ymd_opt(year + 1, 1, 1) {
        let next_start = next_jan1 - Duration::days(dow_from_sunday(next_jan1));
        if d >= next_start {
            return (1, year + 1);
        }
    }
    let Some(jan1) = NaiveDate::from_ymd_opt(year, 1, 1) else {
        return (1, year);
    };
    let start = jan1 - Duration::days(dow_from_sunday(jan1));
    ((d - start).num_days() / 7 + 1, year)
}

fn format_field(out: &mut String, t: &NaiveDateTime, letter: char, count: usize) {
    let date = t.date();
    let year_of_era = |y: i32| {
        if y <= 0 {
            1 - i64::from(y)
        } else {
            i64::from(y)
        }
    };
    match letter {
        'G' => out.push_str(if t.year() <= 0 { "BC" } else { "AD" }),
        'y' | 'Y' => {
            let y = if letter == 'Y' {
                us_week(date).1
            } else {
                t.year()
            };
            let y = year_of_era(y);
            if count == 2 {
                pad(out, y % 100, 2);
            } else {
                pad(out, y, count);
            }
        }
        'M' | 'L' => {
            let m = t.month0() as usize;
            if count >= 4 {
                out.push_str(MONTHS[m]);
            } else if count == 3 {
                out.push_str(&MONTHS[m][..3]);
            } else {
                pad(out, m as i64 + 1, count);
            }
        }
        'w' => pad(out, us_week(date).0, count),
        'W' => {
            let first = date.with_day(1).unwrap_or(date);
            let start = first - Duration::days(dow_from_sunday(first));
            pad(out, (date - start).num_days() / 7 + 1, count);
        }
        'D' => pad(out, i64::from(t.ordinal()), count),
        'd' => pad(out, i64::from(t.day()), count),
        'F' => pad(out, (i64::from(t.day()) - 1) / 7 + 1, count),
        'E' => {
            let name = WEEKDAYS[dow_from_sunday(date) as usize];
            out.push_str(if count >= 4 { name } else { &name[..3] });
        }
        'u' => pad(out, i64::from(date.weekday().number_from_monday()), count),
        'a' => out.push_str(if t.hour() < 12 { "AM" } else { "PM" }),
        'H' => pad(out, i64::from(t.hour()), count),
        'k' => pad(
            out,
            if t.hour() == 0 {
                24
            } else {
                i64::from(t.hour())
            },
            count,
        ),
        'K' => pad(out, i64::from(t.hour() % 12), count),
        'h' => {
            let h = t.hour() % 12;
            pad(out, if h == 0 { 12 } else { i64::from(h) }, count);
        }
        'm' => pad(out, i64::from(t.minute()), count),
        's' => pad(out, i64::from(t.second()), count),
        'S' => pad(out, i64::from(t.nanosecond() / 1_000_000), count),
        'z' => out.push_str(if count >= 4 {
            "Coordinated Universal Time"
        } else {
            "UTC"
        }),
        'Z' => out.push_str("+0000"),
        'X' => out.push('Z'),
        _ => {}
    }
}

/// What parsing has read so far (Java's `Calendar` fields, lenient).
#[derive(Default, Debug)]
struct Fields {
    bc: bool,
    year: Option<i64>,
    month0: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    hour_of_day: Option<i64>,
    hour: Option<i64>,
    pm: Option<bool>,
    minute: Option<i64>,
    second: Option<i64>,
    millis: Option<i64>,
    offset_millis: Option<i64>,
}

impl Fields {
    fn resolve(&self) -> Option<i64> {
        let mut year = self.year.unwrap_or(1970);
        if self.bc {
            year = 1 - year;
        }
        let days = if self.day_of_year.is_some() && self.month0.is_none() && self.day.is_none() {
            let jan1 = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, 1, 1)?;
            days_since_epoch(jan1) + self.day_of_year.unwrap_or(1) - 1
        } else {
            // months roll into years, days into months, as a lenient calendar does
            let total_months = year.checked_mul(12)? + self.month0.unwrap_or(0);
            let y = total_months.div_euclid(12);
            let m = total_months.rem_euclid(12);
            let first = NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m as u32 + 1, 1)?;
            days_since_epoch(first) + self.day.unwrap_or(1) - 1
        };
        let hour = match (self.hour_of_day, self.hour, self.pm) {
            (Some(h), _, _) => h,
            (None, Some(h), pm) => h + if pm == Some(true) { 12 } else { 0 },
            (None, None, Some(true)) => 12,
            _ => 0,
        };
        let millis_of_day = hour * 3_600_000
            + self.minute.unwrap_or(0) * 60_000
            + self.second.unwrap_or(0) * 1000
            + self.millis.unwrap_or(0);
        days.checked_mul(MILLIS_PER_DAY)?
            .checked_add(millis_of_day)?
            .checked_sub(self.offset_millis.unwrap_or(0))
    }
}

fn days_since_epoch(d: NaiveDate) -> i64 {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    (d - epoch).num_days()
}

/// Reads digits at `pos`: exactly up to `count` characters when the field abuts another one,
/// otherwise as many as there are. Returns the value, the new position and the digit count.
fn parse_number(
    chars: &[char],
    pos: usize,
    count: usize,
    obey_count: bool,
) -> Option<(i64, usize, usize)> {
    let limit = if obey_count {
        (pos + count).min(chars.len())
    } else {
        chars.len()
    };
    let mut end = pos;
    let mut value: i64 = 0;
    while end < limit && chars[end].is_ascii_digit() {
        value = value
            .checked_mul(10)?
            .checked_add(i64::from(chars[end].to_digit(10)?))?;
        end += 1;
    }
    if end == pos {
        return None;
    }
    Some((value, end, end - pos))
}

/// Matches the longest of `names` (full, then three-letter forms) case-insensitively.
fn parse_name(chars: &[char], pos: usize, names: &[&str]) -> Option<(usize, usize)> {
    let rest: String = chars[pos..].iter().collect::<String>().to_lowercase();
    let mut best: Option<(usize, usize)> = None;
    for (i, name) in names.iter().enumerate() {
        for candidate in [name.to_string(), name[..3].to_string()] {
            let lower = candidate.to_lowercase();
            if rest.starts_with(&lower) && best.is_none_or(|(_, len)| lower.chars().count() > len) {
                best = Some((i, lower.chars().count()));
            }
        }
    }
    best.map(|(i, len)| (i, pos + len))
}

/// `+hh`, `+hhmm`, `+hh:mm` (and `-`), returning the offset and new position.
fn parse_offset(chars: &[char], pos: usize) -> Option<(i64, usize)> {
    let sign = match chars.get(pos)? {
        '+' => 1,
        '-' => -1,
        _ => return None,
    };
    let digit = |i: usize| chars.get(i).and_then(|c| c.to_digit(10)).map(i64::from);
    let mut p = pos + 1;
    let h1 = digit(p)?;
    p += 1;
    let hours = match digit(p) {
        Some(h2) => {
            p += 1;
            h1 * 10 + h2
        }
        None => h1,
    };
    let mut minutes = 0;
    let colon = chars.get(p) == Some(&':');
    let q = if colon { p + 1 } else { p };
    if let (Some(m1), Some(m2)) = (digit(q), digit(q + 1)) {
        minutes = m1 * 10 + m2;
        p = q + 2;
    }
    Some((sign * (hours * 3_600_000 + minutes * 60_000), p))
}

fn parse_zone(chars: &[char], pos: usize) -> Option<(i64, usize)> {
    if chars.get(pos) == Some(&'Z') {
        return Some((0, pos + 1));
    }
    if let Some(r) = parse_offset(chars, pos) {
        return Some(r);
    }
    let rest: String = chars[pos..].iter().take(3).collect();
    let prefix_len = if rest.eq_ignore_ascii_case("UTC") || rest.eq_ignore_ascii_case("GMT") {
        3
    } else if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("UT") {
        2
    } else {
        return None;
    };
    let after = pos + prefix_len;
    match parse_offset(chars, after) {
        Some(r) => Some(r),
        None => Some((0, after)),
    }
}

fn parse_field(
    chars: &[char],
    mut pos: usize,
    letter: char,
    count: usize,
    obey_count: bool,
    f: &mut Fields,
) -> Option<usize> {
    // Java skips blanks before a field
    while matches!(chars.get(pos), Some(' ') | Some('\t')) {
        pos += 1;
    }
    if pos >= chars.len() {
        return None;
    }
    let number = || parse_number(chars, pos, count, obey_count);
    match letter {
        'G' => {
            let rest: String = chars[pos..].iter().take(2).collect();
            if rest.eq_ignore_ascii_case("AD") {
                f.bc = false;
            } else if rest.eq_ignore_ascii_case("BC") {
                f.bc = true;
            } else {
                return None;
            }
            Some(pos + 2)
        }
        'y' | 'Y' => {
            let (mut value, end, digits) = number()?;
            if count <= 2 && digits == 2 {
                // Java's default century: 80 years before now to 20 years after
                let start = i64::from(chrono::Utc::now().year()) - 80;
                let ambiguous = start.rem_euclid(100);
                value += (start / 100) * 100 + if value < ambiguous { 100 } else { 0 };
            }
            // a week-based year only stands in for a missing calendar year
            if letter == 'y' || f.year.is_none() {
                f.year = Some(value);
            }
            Some(end)
        }
        'M' | 'L' => {
            if count <= 2 {
                let (value, end, _) = number()?;
                f.month0 = Some(value - 1);
                Some(end)
            } else {
                let (index, end) = parse_name(chars, pos, &MONTHS)?;
                f.month0 = Some(index as i64);
                Some(end)
            }
        }
        'E' => parse_name(chars, pos, &WEEKDAYS).map(|(_, end)| end),
        'a' => {
            let rest: String = chars[pos..].iter().take(2).collect();
            if rest.eq_ignore_ascii_case("AM") {
                f.pm = Some(false);
            } else if rest.eq_ignore_ascii_case("PM") {
                f.pm = Some(true);
            } else {
                return None;
            }
            Some(pos + 2)
        }
        'z' | 'Z' | 'X' => {
            let (offset, end) = parse_zone(chars, pos)?;
            f.offset_millis = Some(offset);
            Some(end)
        }
        _ => {
            let (value, end, _) = number()?;
            match letter {
                'd' => f.day = Some(value),
                'D' => f.day_of_year = Some(value),
                'H' => f.hour_of_day = Some(value),
                'k' => f.hour_of_day = Some(if value == 24 { 0 } else { value }),
                'K' => f.hour = Some(value),
                'h' => f.hour = Some(if value == 12 { 0 } else { value }),
                'm' => f.minute = Some(value),
                's' => f.second = Some(value),
                'S' => f.millis = Some(value),
                // read but not used for the date: w, W, F, u
                _ => {}
            }
            Some(end)
        }
    }
}

/// Kafka's `Values.dateFormatFor(date).format(date)` in UTC: a time of day before the end of
/// day one (`HH:mm:ss.SSS'Z'`), a date at midnight (`yyyy-MM-dd`), otherwise a full timestamp
/// (`yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`).
pub fn iso_8601(millis: i64) -> String {
    let pattern = if millis < MILLIS_PER_DAY {
        "HH:mm:ss.SSS'Z'"
    } else if millis % MILLIS_PER_DAY == 0 {
        "yyyy-MM-dd"
    } else {
        "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
    };
    DateFormat::new(pattern)
        .map(|f| f.format(millis))
        .unwrap_or_else(|_| millis.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, ms: u32) -> i64 {
        NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_milli_opt(h, mi, s, ms)
            .unwrap()
            .and_utc()
            .timestamp_millis()
    }

    #[test]
    fn compiles_like_java() {
        assert_eq!(
            DateFormat::new("yyyy-MM-dd'T'HH:mm:ss").unwrap().pattern(),
            "yyyy-MM-dd'T'HH:mm:ss"
        );
        assert_eq!(
            DateFormat::new("yyyy-bb").unwrap_err(),
            "Illegal pattern character 'b'"
        );
        assert_eq!(
            DateFormat::new("yyyy 'T").unwrap_err(),
            "Unterminated quote"
        );
        assert!(DateFormat::new("").is_ok());
    }

    /// `t` formatted with `pattern`.
    fn formatted(pattern: &str, t: i64) -> String {
        DateFormat::new(pattern).unwrap().format(t)
    }

    #[test]
    fn formats_every_common_letter() {
        let t = millis(2017, 1, 2, 15, 4, 5, 7);
        for (pattern, want) in [
            ("yyyyMMdd", "20170102"),
            ("yy-M-d", "17-1-2"),
            ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2017-01-02T15:04:05.007+0000"),
            ("MMM MMMM", "Jan January"),
            ("EEE EEEE E", "Mon Monday Mon"),
            ("hh:mm a", "03:04 PM"),
            ("K k h H", "3 15 3 15"),
            ("z zzzz X XXX", "UTC Coordinated Universal Time Z Z"),
            ("'o''clock' ''", "o'clock '"),
            ("D F u G", "2 1 1 AD"),
            ("S SSSS", "7 0007"),
            ("w W", "1 1"),
        ] {
            assert_eq!(formatted(pattern, t), want, "{pattern}");
        }
        let midnight = millis(2017, 1, 1, 0, 0, 0, 0);
        assert_eq!(formatted("h a k", midnight), "12 AM 24");
    }

    #[test]
    fn week_year_at_year_end() {
        // Sunday 31 December 2017 starts a week that holds 1 January 2018: week 1 of 2018.
        let t = millis(2017, 12, 31, 0, 0, 0, 0);
        assert_eq!(formatted("YYYY w yyyy", t), "2018 1 2017");
    }

    #[test]
    fn parses_and_round_trips() {
        let p = DateFormat::new("yyyy-MM-dd'T'HH:mm:ss.SSS").unwrap();
        let t = millis(2017, 1, 2, 15, 4, 5, 7);
        assert_eq!(p.parse("2017-01-02T15:04:05.007"), Some(t));
        for t in [
            0,
            1,
            86_399_999,
            1_483_369_445_007,
            -1_000,
            253_402_300_799_999,
        ] {
            assert_eq!(p.parse(&p.format(t)), Some(t), "{t}");
        }
        let compact = DateFormat::new("yyyyMMddHHmmss").unwrap();
        assert_eq!(compact.parse("20170102150405"), Some(t - 7));
    }

    #[test]
    fn parsing_is_lenient_like_java() {
        let p = DateFormat::new("yyyy-MM-dd").unwrap();
        // month 13 rolls into the next year, day 32 into the next month
        assert_eq!(p.parse("2016-13-01"), Some(millis(2017, 1, 1, 0, 0, 0, 0)));
        assert_eq!(p.parse("2017-01-32"), Some(millis(2017, 2, 1, 0, 0, 0, 0)));
        // trailing text is ignored, leading blanks skipped
        assert_eq!(
            p.parse(" 2017-01-02 and more"),
            Some(millis(2017, 1, 2, 0, 0, 0, 0))
        );
        assert_eq!(p.parse("2017/01/02"), None);
        assert_eq!(p.parse("garbage"), None);
        assert_eq!(p.parse(""), None);
    }

    #[test]
    fn parses_names_zones_and_twelve_hour_clock() {
        let p = DateFormat::new("EEE, d MMM yyyy hh:mm a Z").unwrap();
        assert_eq!(
            p.parse("Mon, 2 jan 2017 03:04 PM +0100"),
            Some(millis(2017, 1, 2, 14, 4, 0, 0))
        );
        let x = DateFormat::new("yyyy-MM-dd'T'HH:mmXXX").unwrap();
        assert_eq!(
            x.parse("2017-01-02T15:04Z"),
            Some(millis(2017, 1, 2, 15, 4, 0, 0))
        );
        assert_eq!(
            x.parse("2017-01-02T15:04-02:30"),
            Some(millis(2017, 1, 2, 17, 34, 0, 0))
        );
        let z = DateFormat::new("HH:mm z").unwrap();
        assert_eq!(z.parse("01:00 GMT+01:00"), Some(0));
        let months = DateFormat::new("MMMM yyyy").unwrap();
        assert_eq!(
            months.parse("September 2001"),
            Some(millis(2001, 9, 1, 0, 0, 0, 0))
        );
    }

    #[test]
    fn two_digit_years_use_the_default_century() {
        let p = DateFormat::new("yy-MM-dd").unwrap();
        let now = chrono::Utc::now().year();
        let parsed = p.parse("05-01-01").unwrap();
        let year = to_datetime(parsed).unwrap().year();
        assert!(year > now - 80 && year <= now + 20, "{year}");
        // four-letter patterns take the year literally
        let literal = DateFormat::new("yyyy").unwrap();
        assert_eq!(to_datetime(literal.parse("05").unwrap()).unwrap().year(), 5);
    }

    #[test]
    fn iso_forms_follow_values_date_format_for() {
        assert_eq!(iso_8601(1_000), "00:00:01.000Z");
        assert_eq!(iso_8601(MILLIS_PER_DAY * 365), "1971-01-01");
        assert_eq!(
            iso_8601(MILLIS_PER_DAY * 365 + 5),
            "1971-01-01T00:00:00.005Z"
        );
    }
}
