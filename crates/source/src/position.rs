//! Positions in a partition (`--start`, `--end`) and the range between two of them, resolved
//! the same way on every source.
//!
//! A position is an offset, an offset counted back from the end (kcat's `-o -10`), `earliest`,
//! `latest`, or a time (ISO 8601 or `@` and epoch milliseconds): the first offset whose record
//! timestamp is at or after it, as Kafka's ListOffsets answers. A [`Range`] is a start
//! (inclusive, default `earliest`), an end (exclusive, default the end of what the isolation
//! level lets a reader see) and an optional record count. [`Range::resolve`] turns it into
//! offsets against a partition's [`Watermarks`]: an offset outside the partition, and an empty
//! or inverted range given explicitly, are usage errors with the resolved numbers in the
//! message, whatever the source.

use crate::error::Error;
use crate::time::parse_lookup_time;
use crate::IsolationLevel;
use std::fmt;

/// A position given to `--start` or `--end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// An offset.
    Offset(i64),
    /// This many offsets before the end (`-10`: ten records before the end); 0 or more (a
    /// negative count is refused by [`Range::check`]).
    FromEnd(i64),
    /// The log start offset.
    Earliest,
    /// The end: the high watermark, the last stable offset at read_committed.
    Latest,
    /// The first offset whose timestamp is at or after this (ms since the epoch).
    Time(i64),
}

impl Position {
    /// Parses `42`, `-10`, `earliest` (`beginning`), `latest` (`end`), `@1714000000000` or an
    /// ISO 8601 time (`2024-04-24T23:06:40Z`, `2024-04-24`).
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_source::Position;
    /// assert_eq!(Position::parse("42"), Ok(Position::Offset(42)));
    /// assert_eq!(Position::parse("-10"), Ok(Position::FromEnd(10)));
    /// assert_eq!(Position::parse("@1714000000000"), Ok(Position::Time(1_714_000_000_000)));
    /// assert_eq!(Position::parse("2024-04-24T23:06:40Z"), Ok(Position::Time(1_714_000_000_000)));
    /// assert!(Position::parse("soon").is_err());
    /// assert!(Position::parse("@-1").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// A message naming the accepted forms.
    pub fn parse(text: &str) -> Result<Position, String> {
        let t = text.trim();
        match t {
            "earliest" | "beginning" => return Ok(Position::Earliest),
            "latest" | "end" => return Ok(Position::Latest),
            _ => {}
        }
        if t.starts_with('@') {
            return parse_lookup_time(t).map(Position::Time);
        }
        let digits = t.strip_prefix('-').unwrap_or(t);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            let n: i64 = digits.parse().map_err(|_| {
                format!(
                    "invalid offset {text:?}: offsets are 0 to {max}, and offsets counted from the \
                     end -1 to -{max}",
                    max = i64::MAX
                )
            })?;
            return Ok(if t.starts_with('-') {
                Position::FromEnd(n)
            } else {
                Position::Offset(n)
            });
        }
        match crate::time::parse_time(t) {
            Ok(_) => parse_lookup_time(t).map(Position::Time),
            Err(_) => Err(format!(
                "invalid position {text:?}: expected an offset, a negative offset counted from \
                 the end (-10), earliest, latest, an ISO 8601 time (2024-04-24T23:06:40Z) or @ \
                 and epoch milliseconds (@1714000000000)"
            )),
        }
    }

    /// Whether resolving the position needs the partition's watermarks or time index (anything
    /// but a plain offset).
    pub fn needs_partition(self) -> bool {
        !matches!(self, Position::Offset(_))
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Offset(n) => write!(f, "{n}"),
            Position::FromEnd(n) => write!(f, "-{n}"),
            Position::Earliest => f.write_str("earliest"),
            Position::Latest => f.write_str("latest"),
            Position::Time(t) => write!(f, "@{t}"),
        }
    }
}

/// What part of a partition to read: from `start` (inclusive) to `end` (exclusive), at most
/// `count` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Range {
    /// Where to start; `None`: the log start offset.
    pub start: Option<Position>,
    /// Where to stop (exclusive); `None`: the end of what the isolation level shows.
    pub end: Option<Position>,
    /// At most this many records (data records: control records, the transaction markers, are
    /// not counted); `None`: no limit.
    pub count: Option<u64>,
}

impl Range {
    /// Whether the range is the whole partition (no start, end or count given).
    pub fn is_all(&self) -> bool {
        self.start.is_none() && self.end.is_none() && self.count.is_none()
    }

    /// Resolves the range as [`Range::resolve`] does against a partition whose log, as read,
    /// ends at `damage` (damage in its middle, [`krecords_log::Log::damage`]), or `None`
    /// when the range cannot be read whole: a position counted from the end (`-N`, `latest`)
    /// or past it, or an end of time that nothing before the damage reaches. Otherwise the
    /// resolved range, whose end, when it is the damage's offset, was asked for as an offset.
    ///
    /// # Errors
    ///
    /// As [`Range::resolve`], for a range that the damage does not decide.
    pub fn resolve_before(
        &self,
        watermarks: Option<&Watermarks>,
        isolation: IsolationLevel,
        time: &mut dyn FnMut(i64) -> Result<Option<i64>, Error>,
        damage: &krecords_log::Damage,
    ) -> Result<Option<Resolved>, Error> {
        let from_end =
            |p: &Option<Position>| matches!(p, Some(Position::FromEnd(_) | Position::Latest));
        if from_end(&self.start) || from_end(&self.end) {
            return Ok(None);
        }
        let Ok(mut r) = self.resolve(watermarks, isolation, time) else {
            return Ok(None);
        };
        if matches!(self.end, Some(Position::Time(_))) && r.asked_end >= Some(damage.offset) {
            r.asked_end = None;
        }
        Ok(Some(r))
    }

    /// Refuses what is wrong whatever the partition holds: a zero count, two offsets that make
    /// an empty or inverted range.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`], as [`Range::resolve`] says it.
    pub fn check(&self) -> Result<(), Error> {
        if self.count == Some(0) {
            return Err(Error::Usage("a count of records must be at least 1".into()));
        }
        for (what, p) in [("start", self.start), ("end", self.end)] {
            if let Some(Position::FromEnd(n)) = p {
                if n < 0 {
                    return Err(Error::Usage(format!(
                        "{what}: a position counted back from the end takes 0 or more \
                         offsets, not {n}"
                    )));
                }
            }
        }
        match (self.start, self.end) {
            (Some(Position::Offset(s)), Some(Position::Offset(e))) if e <= s => {
                Err(Error::Usage(empty(e.to_string(), s.to_string())))
            }
            (Some(Position::Time(s)), Some(Position::Time(e))) if e <= s => Err(Error::Usage(
                empty(Position::Time(e).to_string(), Position::Time(s).to_string()),
            )),
            _ => Ok(()),
        }
    }

    /// The range as one partition of a read of several (a `log.dirs` root, a topic, several
    /// partition directories) takes it: an end offset past the partition's end (`watermarks`'
    /// high watermark) ends at that end, so the partition is read as far as it goes instead of
    /// being left out as outside the range (as `krec export` reads it); everything else as
    /// given. A partition read alone keeps the end as asked, which [`Range::resolve`] refuses
    /// past its end.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_source::{Position, Range, Watermarks};
    /// let wm = Watermarks { log_start: 0, high_watermark: 41, last_stable: Some(41) };
    /// let r = Range { end: Some(Position::Offset(42)), ..Range::default() };
    /// assert_eq!(r.ending_within(&wm).end, Some(Position::Offset(41)));
    /// let r = Range { end: Some(Position::Offset(40)), ..Range::default() };
    /// assert_eq!(r.ending_within(&wm), r);
    /// // Nothing of the partition is in [45, 50): left as asked, for resolving to say so.
    /// let r = Range { start: Some(Position::Offset(45)), end: Some(Position::Offset(50)), ..Range::default() };
    /// assert_eq!(r.ending_within(&wm), r);
    /// ```
    pub fn ending_within(&self, watermarks: &Watermarks) -> Range {
        let hw = watermarks.high_watermark;
        // A start offset at or past the end keeps the range as asked: nothing of the
        // partition is in it, which resolving says.
        if matches!(self.start, Some(Position::Offset(s)) if s >= hw) {
            return *self;
        }
        let end = self.end.map(|e| match e {
            Position::Offset(o) if o > hw => Position::Offset(hw),
            e => e,
        });
        Range { end, ..*self }
    }

    /// Whether resolving needs the partition's watermarks or time index.
    pub fn needs_partition(&self) -> bool {
        self.start.is_some_and(Position::needs_partition)
            || self.end.is_some_and(Position::needs_partition)
    }

    /// Resolves the range to offsets against a partition's watermarks (`None` when the source
    /// cannot know them, standard input), looking times up with `time` (the first offset whose
    /// timestamp is at or after the time, `None` after the last record).
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_source::{IsolationLevel, Position, Range, Watermarks};
    /// let wm = Watermarks { log_start: 0, high_watermark: 1050, last_stable: Some(1050) };
    /// let r = Range { start: Some(Position::FromEnd(10)), ..Range::default() };
    /// let got = r.resolve(Some(&wm), IsolationLevel::ReadUncommitted, &mut |_| Ok(None)).unwrap();
    /// assert_eq!((got.start, got.end), (1040, Some(1050)));
    /// let r = Range { start: Some(Position::Offset(5000)), ..Range::default() };
    /// let e = r.resolve(Some(&wm), IsolationLevel::ReadUncommitted, &mut |_| Ok(None)).unwrap_err();
    /// assert_eq!(e.to_string(), "offset 5000 is out of range: the partition holds [0, 1050)");
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`] for an offset outside the partition, or positions that depend on
    /// the partition and make an empty range of it; [`Error::Usage`] for an empty or inverted
    /// range given explicitly, a zero count, or a position that needs watermarks the source
    /// does not have;
    /// the errors of `time`.
    pub fn resolve(
        &self,
        watermarks: Option<&Watermarks>,
        isolation: IsolationLevel,
        time: &mut dyn FnMut(i64) -> Result<Option<i64>, Error>,
    ) -> Result<Resolved, Error> {
        self.check()?;
        let readable = watermarks.map(|w| w.readable_end(isolation));
        let mut at = |pos: Position, what: &str| -> Result<Option<i64>, Error> {
            let Some(w) = watermarks else {
                return match pos {
                    Position::Offset(n) => Ok(Some(n)),
                    Position::Earliest => Ok(None),
                    other => Err(Error::Usage(format!(
                        "{what} {other}: this source cannot tell where its partition ends or \
                         what times it holds (standard input); give an offset"
                    ))),
                };
            };
            let end = w.readable_end(isolation);
            Ok(Some(match pos {
                Position::Offset(n) => {
                    w.check(n)?;
                    n
                }
                Position::FromEnd(n) => end.saturating_sub(n).max(w.log_start),
                Position::Earliest => w.log_start,
                Position::Latest => end,
                Position::Time(t) => time(t)?
                    .unwrap_or(end)
                    .clamp(w.log_start, end.max(w.log_start)),
            }))
        };
        let start = match self.start {
            Some(p) => at(p, "start")?,
            None => watermarks.map(|w| w.log_start),
        };
        let end = match self.end {
            Some(p) => at(p, "end")?,
            None => None,
        };
        if let (Some(s), Some(e)) = (start, end) {
            // Two offsets (or times) that make an empty range were refused by `check`;
            // positions that depend on the partition (times, counted from the end) can make an
            // empty range of one partition that another fills: nothing of it is in the range,
            // as for a position outside it.
            if e <= s {
                let name = |p: Option<Position>, o: i64| match p {
                    Some(Position::Offset(_)) | None => format!("{o}"),
                    Some(p) => format!("{p} (offset {o})"),
                };
                return Err(Error::OutOfRange(empty(
                    name(self.end, e),
                    name(self.start, s),
                )));
            }
        }
        Ok(Resolved {
            start: start.unwrap_or(i64::MIN),
            end: match (end, readable) {
                (Some(e), Some(r)) => Some(e.min(r)),
                (e, r) => e.or(r),
            },
            asked_end: end,
            count: self.count,
        })
    }
}

/// The error of an empty or inverted range.
fn empty(end: String, start: String) -> String {
    format!("empty range: end {end} is not after start {start}: the end is exclusive")
}

/// A [`Range`] in offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// First offset (inclusive); `i64::MIN` when unbounded (standard input without `--start`).
    pub start: i64,
    /// Offset to stop at (exclusive): `--end`, or the end of what the isolation level shows
    /// when that comes first; `None`: the end of the input.
    pub end: Option<i64>,
    /// The end asked for with `--end`, resolved.
    pub asked_end: Option<i64>,
    /// At most this many records.
    pub count: Option<u64>,
}

impl Resolved {
    /// Everything.
    pub const ALL: Resolved = Resolved {
        start: i64::MIN,
        end: None,
        asked_end: None,
        count: None,
    };

    /// Whether `offset` is inside `[start, end)`.
    pub fn contains(&self, offset: i64) -> bool {
        offset >= self.start && self.end.is_none_or(|e| offset < e)
    }

    /// `start` when bounded.
    pub fn start(&self) -> Option<i64> {
        (self.start != i64::MIN).then_some(self.start)
    }
}

/// A partition's offsets as a broker reports them (ListOffsets, a Fetch response) or its files
/// hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watermarks {
    /// The log start offset.
    pub log_start: i64,
    /// The high watermark: the offset after the last record.
    pub high_watermark: i64,
    /// The last stable offset (the first offset of the earliest open transaction, else the
    /// high watermark), when known.
    pub last_stable: Option<i64>,
}

impl Watermarks {
    /// The watermarks of an empty partition at offset 0 (no last stable offset known).
    pub const EMPTY: Watermarks = Watermarks {
        log_start: 0,
        high_watermark: 0,
        last_stable: None,
    };

    /// The JSON object `krec log info` prints for a live partition:
    /// `{"log_start_offset":N,"high_watermark":N,"last_stable_offset":N}`, the last stable
    /// offset being the high watermark when it is not known.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "log_start_offset": self.log_start,
            "high_watermark": self.high_watermark,
            "last_stable_offset": self.last_stable.unwrap_or(self.high_watermark),
        })
    }

    /// Where a reader at `isolation` stops: the high watermark, or the last stable offset.
    pub fn readable_end(&self, isolation: IsolationLevel) -> i64 {
        match isolation {
            IsolationLevel::ReadCommitted => self.last_stable.unwrap_or(self.high_watermark),
            IsolationLevel::ReadUncommitted => self.high_watermark,
        }
    }

    /// `Ok` when `offset` is a position in the partition: from the log start offset up to the
    /// high watermark (where the next record goes).
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`]: "offset 5000 is out of range: the partition holds [0, 1050)".
    pub fn check(&self, offset: i64) -> Result<(), Error> {
        if offset < self.log_start || offset > self.high_watermark {
            return Err(Error::OutOfRange(format!(
                "offset {offset} is out of range: the partition holds [{}, {})",
                self.log_start, self.high_watermark
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WM: Watermarks = Watermarks {
        log_start: 100,
        high_watermark: 200,
        last_stable: Some(150),
    };

    fn resolve(start: &str, end: &str, isolation: IsolationLevel) -> Result<Resolved, Error> {
        let p = |s: &str| (!s.is_empty()).then(|| Position::parse(s).unwrap());
        Range {
            start: p(start),
            end: p(end),
            count: None,
        }
        .resolve(Some(&WM), isolation, &mut |t| {
            Ok((t < 1000).then_some(100 + t / 10))
        })
    }

    #[test]
    fn watermarks_json_fills_in_the_last_stable_offset() {
        assert_eq!(
            WM.to_json().to_string(),
            r#"{"log_start_offset":100,"high_watermark":200,"last_stable_offset":150}"#
        );
        let w = Watermarks {
            last_stable: None,
            ..WM
        };
        assert_eq!(w.to_json()["last_stable_offset"], 200);
        assert_eq!(Watermarks::EMPTY.to_json()["high_watermark"], 0);
    }

    #[test]
    fn positions_parse() {
        assert_eq!(Position::parse("0"), Ok(Position::Offset(0)));
        assert_eq!(Position::parse("-1"), Ok(Position::FromEnd(1)));
        assert_eq!(Position::parse("beginning"), Ok(Position::Earliest));
        assert_eq!(Position::parse("end"), Ok(Position::Latest));
        assert_eq!(Position::parse("@0"), Ok(Position::Time(0)));
        // A negative time is no time (ListOffsets' sentinels live): refused, in both forms.
        for negative in ["@-5", "1969-12-31"] {
            let e = Position::parse(negative).unwrap_err();
            assert!(
                e.contains("milliseconds since the epoch (0 or more)"),
                "{e}"
            );
        }
        assert_eq!(
            Position::parse("2024-04-24"),
            Ok(Position::Time(1_713_916_800_000))
        );
        for bad in ["", "-", "soon", "1.5", "@x", "99999999999999999999"] {
            assert!(Position::parse(bad).is_err(), "{bad:?}");
        }
        // Past i64: the allowed range, not the parser's words.
        for big in ["9223372036854775808", "-9223372036854775808"] {
            let e = Position::parse(big).unwrap_err();
            assert!(e.contains("offsets are 0 to 9223372036854775807"), "{e}");
        }
        for p in ["5", "-5", "earliest", "latest", "@7"] {
            assert_eq!(Position::parse(p).unwrap().to_string(), p);
        }
    }

    #[test]
    fn ranges_resolve_on_the_watermarks() {
        let ru = IsolationLevel::ReadUncommitted;
        let rc = IsolationLevel::ReadCommitted;
        let r = resolve("", "", ru).unwrap();
        assert_eq!((r.start, r.end, r.asked_end), (100, Some(200), None));
        let r = resolve("", "180", rc).unwrap();
        assert_eq!((r.end, r.asked_end), (Some(150), Some(180)));
        assert_eq!(resolve("", "", rc).unwrap().end, Some(150));
        assert_eq!(resolve("-10", "", ru).unwrap().start, 190);
        assert_eq!(resolve("-10", "", rc).unwrap().start, 140);
        assert_eq!(resolve("-1000", "", ru).unwrap().start, 100);
        assert_eq!(resolve("latest", "", ru).unwrap().start, 200);
        assert_eq!(resolve("@50", "@300", ru).unwrap().start, 105);
        assert_eq!(resolve("@50", "@300", ru).unwrap().end, Some(130));
        assert_eq!(resolve("@5000", "", ru).unwrap().start, 200);
        assert_eq!(resolve("200", "", ru).unwrap().start, 200);
        let e = resolve("201", "", ru).unwrap_err().to_string();
        assert_eq!(
            e,
            "offset 201 is out of range: the partition holds [100, 200)"
        );
        let e = resolve("", "99", ru).unwrap_err().to_string();
        assert_eq!(
            e,
            "offset 99 is out of range: the partition holds [100, 200)"
        );
        let e = resolve("150", "120", ru).unwrap_err().to_string();
        assert_eq!(
            e,
            "empty range: end 120 is not after start 150: the end is exclusive"
        );
        let e = resolve("earliest", "earliest", ru).unwrap_err().to_string();
        assert!(e.contains("end earliest (offset 100)"), "{e}");
        let zero = Range {
            count: Some(0),
            ..Range::default()
        };
        assert!(zero.resolve(Some(&WM), ru, &mut |_| Ok(None)).is_err());
    }

    #[test]
    fn without_watermarks_only_offsets_resolve() {
        let ru = IsolationLevel::ReadUncommitted;
        let r = Range {
            start: Some(Position::Offset(5)),
            end: Some(Position::Offset(9)),
            count: None,
        };
        let got = r.resolve(None, ru, &mut |_| Ok(None)).unwrap();
        assert_eq!((got.start, got.end), (5, Some(9)));
        assert_eq!(
            Range::default()
                .resolve(None, ru, &mut |_| Ok(None))
                .unwrap(),
            Resolved::ALL
        );
        let r = Range {
            start: Some(Position::FromEnd(5)),
            ..Range::default()
        };
        assert!(r.resolve(None, ru, &mut |_| Ok(None)).is_err());
    }

    #[test]
    fn a_negative_count_from_the_end_is_refused() {
        let wm = Watermarks {
            log_start: 0,
            high_watermark: 100,
            last_stable: Some(100),
        };
        let ru = IsolationLevel::ReadUncommitted;
        for n in [-3, i64::MIN] {
            for r in [
                Range {
                    start: Some(Position::FromEnd(n)),
                    ..Range::default()
                },
                Range {
                    end: Some(Position::FromEnd(n)),
                    ..Range::default()
                },
            ] {
                let e = r.resolve(Some(&wm), ru, &mut |_| Ok(None)).unwrap_err();
                assert!(matches!(e, Error::Usage(_)), "{e}");
            }
        }
        let r = Range {
            start: Some(Position::FromEnd(0)),
            ..Range::default()
        };
        let got = r.resolve(Some(&wm), ru, &mut |_| Ok(None)).unwrap();
        assert_eq!(got.start, 100, "-0 is the end, as latest");
    }
}
