//! Timestamps as ISO-8601 text, shared by positions (`--start 2024-04-24T23:00:00Z`) and the
//! commands that print times: parsing
//! `--time-start`/`--time-end` and printing `--timestamps human`, in UTC, without a time-zone
//! database; and the wall clock in epoch milliseconds.
//!
//! The calendar arithmetic is Howard Hinnant's `days_from_civil` / `civil_from_days`
//! (proleptic Gregorian calendar, exact for every `i64` millisecond count we print).
//!
//! Kept here rather than taken from a date crate (`time`, `jiff`, `chrono`): only UTC is
//! needed, the accepted and printed forms are a fixed contract (docs/design.md, section 4.3)
//! that a crate's parser would widen or narrow, every `i64` millisecond must print (a crate's
//! date range ends at year 9999 or ±262143), and the whole of it is two short functions.

const MS_PER_DAY: i64 = 86_400_000;

/// The wall clock in milliseconds since the epoch (0 before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01: (year, month 1..=12, day 1..=31).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Appends `ms` (milliseconds since the epoch) as `2024-04-24T23:06:40.000Z`. Years outside
/// 0..=9999 get ISO 8601's expanded form (`+10000-01-01T...`, `-000001-...`).
pub fn write_iso(out: &mut Vec<u8>, ms: i64) {
    let days = ms.div_euclid(MS_PER_DAY);
    let in_day = ms.rem_euclid(MS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    let two = |out: &mut Vec<u8>, v: u32| {
        out.extend_from_slice(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8])
    };
    if (0..=9999).contains(&y) {
        let y = y as u32;
        two(out, y / 100);
        two(out, y % 100);
    } else {
        use std::io::Write;
        let _ = write!(
            out,
            "{}{:06}",
            if y < 0 { '-' } else { '+' },
            y.unsigned_abs()
        );
    }
    out.push(b'-');
    two(out, mo);
    out.push(b'-');
    two(out, d);
    out.push(b'T');
    let secs = (in_day / 1000) as u32;
    two(out, secs / 3600);
    out.push(b':');
    two(out, secs / 60 % 60);
    out.push(b':');
    two(out, secs % 60);
    let millis = (in_day % 1000) as u32;
    out.extend_from_slice(&[
        b'.',
        b'0' + (millis / 100) as u8,
        b'0' + (millis / 10 % 10) as u8,
        b'0' + (millis % 10) as u8,
        b'Z',
    ]);
}

/// `ms` as an ISO-8601 UTC string.
pub fn iso(ms: i64) -> String {
    let mut v = Vec::new();
    write_iso(&mut v, ms);
    String::from_utf8(v).unwrap_or_default()
}

/// Parses a time argument: milliseconds since the epoch (`1714000000000`, may be negative) or
/// ISO 8601: `YYYY-MM-DD`, optionally followed by `T` (or a space) and `HH:MM`, `HH:MM:SS` or
/// `HH:MM:SS.fraction` (digits past milliseconds are cut), then `Z` or an offset `+HH:MM`,
/// `+HHMM`, `+HH` (or `-`). Without a zone the time is UTC. Either may follow an `@`, the form
/// a position takes a time in ([`Position::parse`](crate::Position::parse): `@1714000000000`),
/// so that every option taking a time takes the same forms.
///
/// ```
/// use krecords_source::time::parse_time;
/// assert_eq!(parse_time("1714000000005"), Ok(1_714_000_000_005));
/// assert_eq!(parse_time("@1714000000005"), Ok(1_714_000_000_005));
/// assert_eq!(parse_time("@2024-04-24T23:06:40Z"), Ok(1_714_000_000_000));
/// assert!(parse_time("@@1714000000005").is_err());
/// ```
pub fn parse_time(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let t = t.strip_prefix('@').unwrap_or(t);
    let digits = t.strip_prefix('-').unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<i64>()
            .map_err(|e| format!("invalid time {text:?}: {e}"));
    }
    parse_iso(t).ok_or_else(|| {
        format!(
            "invalid time {text:?}: expected epoch milliseconds (1714000000000, or \
             @1714000000000 as positions take it) or ISO 8601 such as 2024-04-24T23:06:40Z or \
             2024-04-24T23:06:40.123+02:00"
        )
    })
}

/// Parses a time to look an offset up at (`krec offsets --time`, `krec log offsets --time`, a
/// position's time: `--start @1714000000000`): [`parse_time`]'s forms, and 0 or more. A
/// negative time is refused (also an ISO 8601 time before 1970): Kafka's ListOffsets takes
/// -1 for the latest offset and -2 for the earliest, so it would answer a live cluster
/// differently from a broker's files, and a time before 1970 has no records to find.
///
/// ```
/// use krecords_source::time::parse_lookup_time;
/// assert_eq!(parse_lookup_time("@0"), Ok(0));
/// let e = parse_lookup_time("-1").unwrap_err();
/// assert!(e.contains("milliseconds since the epoch"), "{e}");
/// assert!(e.contains("earliest and latest offsets are already columns of `krec offsets`"), "{e}");
/// assert!(parse_lookup_time("1969-12-31").is_err());
/// ```
///
/// # Errors
///
/// [`parse_time`]'s, and the negative time, with what a time is.
pub fn parse_lookup_time(text: &str) -> Result<i64, String> {
    since_epoch(
        text,
        "it is not ListOffsets' -1 (latest) or -2 (earliest): the earliest and latest offsets \
         are already columns of `krec offsets` (and positions take earliest and latest)",
    )
}

/// [`parse_time`], refusing a negative time with what a time is and `why` not.
fn since_epoch(text: &str, why: &str) -> Result<i64, String> {
    let ms = parse_time(text)?;
    if ms < 0 {
        return Err(format!(
            "invalid time {text:?}: a time is milliseconds since the epoch (0 or more), ISO \
             8601 such as 2024-04-24T23:06:40Z, or @ and epoch milliseconds; {why}"
        ));
    }
    Ok(ms)
}

/// Parses a time that record timestamps are compared with (`krec dump --time-start` and
/// `--time-end`): [`parse_time`]'s forms, and 0 or more, as [`parse_lookup_time`] has it.
/// A negative time is refused (also an ISO 8601 time before 1970): it is no timestamp Kafka
/// writes, and -1 is NO_TIMESTAMP, the timestamp of v0 messages (which have none), which a
/// filter from a negative time would take for a time.
///
/// ```
/// use krecords_source::time::parse_record_time;
/// assert_eq!(parse_record_time("@0"), Ok(0));
/// assert_eq!(parse_record_time("2024-04-24T23:06:40Z"), Ok(1_714_000_000_000));
/// let e = parse_record_time("-1").unwrap_err();
/// assert!(e.contains("milliseconds since the epoch (0 or more)"), "{e}");
/// assert!(e.contains("NO_TIMESTAMP"), "{e}");
/// assert!(parse_record_time("1969-12-31").is_err());
/// ```
///
/// # Errors
///
/// [`parse_time`]'s, and the negative time, with what a time is.
pub fn parse_record_time(text: &str) -> Result<i64, String> {
    since_epoch(
        text,
        "Kafka writes no timestamp before 1970 (-1 is NO_TIMESTAMP, the timestamp of v0 \
         messages)",
    )
}

/// A cursor over ASCII text.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.i += 1;
        }
        hit
    }

    /// Exactly `n` digits.
    fn num(&mut self, n: usize) -> Option<i64> {
        let digits = self.s.get(self.i..self.i + n)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i += n;
        Some(
            digits
                .iter()
                .fold(0i64, |v, d| v * 10 + i64::from(d - b'0')),
        )
    }
}

fn parse_iso(t: &str) -> Option<i64> {
    let mut c = Cursor {
        s: t.as_bytes(),
        i: 0,
    };
    let y = c.num(4)?;
    let (m, d);
    if !c.eat(b'-') {
        return None;
    }
    m = c.num(2)?;
    if !c.eat(b'-') {
        return None;
    }
    d = c.num(2)?;
    if !(1..=12).contains(&m) || !(1..=days_in_month(y, m)).contains(&d) {
        return None;
    }
    let (mut h, mut mi, mut s, mut ms) = (0, 0, 0, 0);
    if c.eat(b'T') || c.eat(b't') || c.eat(b' ') {
        h = c.num(2)?;
        if !c.eat(b':') {
            return None;
        }
        mi = c.num(2)?;
        if c.eat(b':') {
            s = c.num(2)?;
            if c.eat(b'.') || c.eat(b',') {
                let start = c.i;
                while c.peek().is_some_and(|b| b.is_ascii_digit()) {
                    c.i += 1;
                }
                let frac = c.s.get(start..c.i)?;
                if frac.is_empty() {
                    return None;
                }
                for k in 0..3 {
                    ms = ms * 10 + frac.get(k).map_or(0, |b| i64::from(b - b'0'));
                }
            }
        }
        if h > 23 || mi > 59 || s > 59 {
            return None;
        }
    }
    let offset_min = match c.peek() {
        None => 0,
        Some(b'Z' | b'z') => {
            c.i += 1;
            0
        }
        Some(sign @ (b'+' | b'-')) => {
            c.i += 1;
            let oh = c.num(2)?;
            // `+HH:MM`, `+HHMM` or `+HH`.
            let om = if c.eat(b':') || c.peek().is_some() {
                c.num(2)?
            } else {
                0
            };
            if oh > 23 || om > 59 {
                return None;
            }
            let total = oh * 60 + om;
            if sign == b'-' {
                -total
            } else {
                total
            }
        }
        Some(_) => return None,
    };
    if c.i != c.s.len() {
        return None;
    }
    let secs = days_from_civil(y, m, d) * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    Some(secs * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_iso_utc() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_714_000_000_000), "2024-04-24T23:06:40.000Z");
        assert_eq!(iso(1_714_000_000_123), "2024-04-24T23:06:40.123Z");
        assert_eq!(iso(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso(253_402_300_800_000), "+010000-01-01T00:00:00.000Z");
        assert_eq!(iso(i64::MAX), "+292278994-08-17T07:12:55.807Z");
        assert_eq!(iso(i64::MIN), "-292275055-05-16T16:47:04.192Z");
    }

    #[test]
    fn parses_epoch_and_iso() {
        assert_eq!(parse_time("1714000000000"), Ok(1_714_000_000_000));
        assert_eq!(parse_time("-5"), Ok(-5));
        assert_eq!(parse_time("2024-04-24T23:06:40Z"), Ok(1_714_000_000_000));
        assert_eq!(parse_time("2024-04-24T23:06:40"), Ok(1_714_000_000_000));
        assert_eq!(parse_time("2024-04-24 23:06:40z"), Ok(1_714_000_000_000));
        assert_eq!(
            parse_time("2024-04-24T23:06:40.123+02:00"),
            Ok(1_714_000_000_123 - 7_200_000)
        );
        assert_eq!(
            parse_time("2024-04-24T23:06:40.1239-0130"),
            Ok(1_714_000_000_123 + 5_400_000)
        );
        assert_eq!(
            parse_time("2024-04-24T23:06:40.5+05"),
            Ok(1_714_000_000_500 - 18_000_000)
        );
        assert_eq!(
            parse_time("2024-04-24T23:06Z"),
            Ok(1_714_000_000_000 - 40_000)
        );
        assert_eq!(parse_time("2024-04-24"), Ok(1_713_916_800_000));
        assert_eq!(parse_time("2000-02-29T00:00:00Z"), Ok(951_782_400_000));
        for bad in [
            "",
            "-",
            "yesterday",
            "2024-4-24",
            "2024-02-30",
            "2023-02-29",
            "2024-13-01",
            "2024-04-24T24:00:00Z",
            "2024-04-24T23:06:40.Z",
            "2024-04-24T23:06:40+2",
            "2024-04-24T23:06:40Zjunk",
            "99999999999999999999",
        ] {
            assert!(parse_time(bad).is_err(), "{bad:?}");
        }
        for ms in [
            0,
            1_714_000_000_123,
            -1,
            951_782_400_000,
            -62_135_596_800_000,
        ] {
            assert_eq!(parse_time(&iso(ms)), Ok(ms), "{}", iso(ms));
        }
    }

    /// A negative time to look up is refused in every form (it was passed through as
    /// ListOffsets' sentinel live and read as a time before 1970 offline).
    #[test]
    fn a_lookup_time_is_not_negative() {
        assert_eq!(parse_lookup_time("0"), Ok(0));
        assert_eq!(parse_lookup_time("@1714000000000"), Ok(1_714_000_000_000));
        for bad in ["-1", "-7", "@-2", "1969-12-31T23:59:59.999Z"] {
            let e = parse_lookup_time(bad).unwrap_err();
            assert!(e.contains("milliseconds since the epoch"), "{bad}: {e}");
        }
        assert!(parse_lookup_time("soon")
            .unwrap_err()
            .contains("expected epoch"));
    }
}
