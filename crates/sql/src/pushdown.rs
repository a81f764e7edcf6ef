//! Filters on `partition`, `offset` and `timestamp` turned into what the sources can skip:
//! which partitions to open, and an offset and time range inside each.
//!
//! The analysis is conservative: a filter it does not understand restricts nothing, and every
//! filter stays applied by DataFusion above the scan (they are pushed down as `Inexact`), so the
//! scan may return more rows than the filters let through, never fewer.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};

/// The column a filter bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bounded {
    Partition,
    Offset,
    Timestamp,
}

impl Bounded {
    fn of(expr: &Expr) -> Option<Bounded> {
        match expr {
            Expr::Column(c) => match c.name.as_str() {
                "partition" => Some(Bounded::Partition),
                "offset" => Some(Bounded::Offset),
                "timestamp" => Some(Bounded::Timestamp),
                _ => None,
            },
            // `CAST(offset AS ...)` from a coercion keeps the order of int columns.
            Expr::Cast(c) => Bounded::of(&c.expr).filter(|b| *b != Bounded::Timestamp),
            _ => None,
        }
    }
}

/// A half-open interval `[lo, hi)` of `i64`; `None` ends are unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Interval {
    /// Inclusive lower end.
    pub lo: Option<i64>,
    /// Exclusive upper end.
    pub hi: Option<i64>,
}

impl Interval {
    fn intersect(self, other: Interval) -> Interval {
        Interval {
            lo: max_opt(self.lo, other.lo),
            hi: min_opt(self.hi, other.hi),
        }
    }

    /// Whether the interval holds no value.
    pub fn is_empty(&self) -> bool {
        matches!((self.lo, self.hi), (Some(l), Some(h)) if h <= l)
    }

    /// Whether `v` is inside.
    pub fn contains(&self, v: i64) -> bool {
        self.lo.is_none_or(|l| v >= l) && self.hi.is_none_or(|h| v < h)
    }

    fn from_op(op: Operator, v: i64) -> Option<Interval> {
        let after = v.checked_add(1);
        Some(match op {
            Operator::Eq => Interval {
                lo: Some(v),
                hi: after,
            },
            Operator::Lt => Interval {
                lo: None,
                hi: Some(v),
            },
            Operator::LtEq => Interval {
                lo: None,
                hi: after,
            },
            Operator::Gt => Interval {
                lo: Some(after?),
                hi: None,
            },
            Operator::GtEq => Interval {
                lo: Some(v),
                hi: None,
            },
            _ => return None,
        })
    }
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// What the filters of a scan let the sources skip.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pushdown {
    /// The partitions that may hold rows: `None` any; else a list (an `IN`, `=`, or a range
    /// cut down to the partitions that exist when the scan is planned).
    pub partitions: Option<Vec<i32>>,
    /// Partition numbers bounded by a range (`partition >= 3`).
    pub partition_range: Interval,
    /// The offsets that may hold rows.
    pub offsets: Interval,
    /// The timestamps (ms since the epoch) that may hold rows.
    pub timestamps: Interval,
}

impl Pushdown {
    /// Analyses the conjunction of `filters`.
    pub fn of(filters: &[Expr]) -> Pushdown {
        let mut p = Pushdown::default();
        for f in filters {
            p.add(f);
        }
        p
    }

    /// Whether `filter` restricts something the scan can skip (`Inexact` pushdown).
    pub fn understands(filter: &Expr) -> bool {
        let mut p = Pushdown::default();
        p.add(filter);
        p != Pushdown::default()
    }

    /// Whether a partition numbered `n` may hold rows.
    pub fn wants_partition(&self, n: i32) -> bool {
        self.partition_range.contains(i64::from(n))
            && self.partitions.as_ref().is_none_or(|l| l.contains(&n))
    }

    fn add(&mut self, e: &Expr) {
        match e {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) if *op == Operator::And => {
                self.add(left);
                self.add(right);
            }
            Expr::BinaryExpr(BinaryExpr { left, op, right }) if *op == Operator::Or => {
                let a = Pushdown::of(std::slice::from_ref(left.as_ref()));
                let b = Pushdown::of(std::slice::from_ref(right.as_ref()));
                self.intersect(a.union(b));
            }
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
                let (col, op, lit) = match (Bounded::of(left), Bounded::of(right)) {
                    (Some(c), None) => (c, *op, right.as_ref()),
                    (None, Some(c)) => match op.swap() {
                        Some(op) => (c, op, left.as_ref()),
                        None => return,
                    },
                    _ => return,
                };
                let Some(v) = literal(lit, col) else { return };
                if col == Bounded::Partition && op == Operator::Eq {
                    // A list, so that `partition = 0 OR partition = 2` is two partitions.
                    self.restrict_partitions(i32::try_from(v).into_iter().collect());
                } else if let Some(i) = Interval::from_op(op, v) {
                    self.bound(col, i);
                }
            }
            Expr::Between(Between {
                expr,
                negated: false,
                low,
                high,
            }) => {
                let Some(col) = Bounded::of(expr) else { return };
                let (Some(l), Some(h)) = (literal(low, col), literal(high, col)) else {
                    return;
                };
                let i = Interval {
                    lo: Some(l),
                    hi: h.checked_add(1),
                };
                self.bound(col, i);
            }
            Expr::InList(list) if !list.negated && Bounded::of(&list.expr).is_some() => {
                let Some(col) = Bounded::of(&list.expr) else {
                    return;
                };
                let mut values = Vec::new();
                for item in &list.list {
                    let Some(v) = literal(item, col) else { return };
                    values.push(v);
                }
                match col {
                    Bounded::Partition => {
                        let parts: Vec<i32> = values
                            .iter()
                            .filter_map(|v| i32::try_from(*v).ok())
                            .collect();
                        self.restrict_partitions(parts);
                    }
                    Bounded::Offset | Bounded::Timestamp => {
                        let i = Interval {
                            lo: values.iter().copied().min(),
                            hi: values.iter().copied().max().and_then(|m| m.checked_add(1)),
                        };
                        if !values.is_empty() {
                            self.bound(col, i);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// What either `self` or `other` lets through (`a OR b`).
    fn union(self, other: Pushdown) -> Pushdown {
        let hull = |a: Interval, b: Interval| Interval {
            lo: a.lo.zip(b.lo).map(|(x, y)| x.min(y)),
            hi: a.hi.zip(b.hi).map(|(x, y)| x.max(y)),
        };
        // A side's partitions as a list, when it has one and no range on them.
        let list = |p: &Pushdown| {
            p.partitions
                .clone()
                .filter(|_| p.partition_range == Interval::default())
        };
        let partitions = match (list(&self), list(&other)) {
            (Some(mut a), Some(b)) => {
                for n in b {
                    if !a.contains(&n) {
                        a.push(n);
                    }
                }
                Some(a)
            }
            _ => None,
        };
        let ranged = |p: &Pushdown| match &p.partitions {
            None => p.partition_range,
            Some(l) => p.partition_range.intersect(Interval {
                lo: l.iter().copied().min().map(i64::from),
                hi: l
                    .iter()
                    .copied()
                    .max()
                    .and_then(|m| i64::from(m).checked_add(1)),
            }),
        };
        Pushdown {
            partition_range: if partitions.is_some() {
                Interval::default()
            } else {
                hull(ranged(&self), ranged(&other))
            },
            partitions,
            offsets: hull(self.offsets, other.offsets),
            timestamps: hull(self.timestamps, other.timestamps),
        }
    }

    /// What both `self` and `other` let through (`a AND b`).
    fn intersect(&mut self, other: Pushdown) {
        if let Some(l) = other.partitions {
            self.restrict_partitions(l);
        }
        self.partition_range = self.partition_range.intersect(other.partition_range);
        self.offsets = self.offsets.intersect(other.offsets);
        self.timestamps = self.timestamps.intersect(other.timestamps);
    }

    fn restrict_partitions(&mut self, parts: Vec<i32>) {
        self.partitions = Some(match self.partitions.take() {
            None => parts,
            Some(old) => old.into_iter().filter(|p| parts.contains(p)).collect(),
        });
    }

    fn bound(&mut self, col: Bounded, i: Interval) {
        match col {
            Bounded::Partition => self.partition_range = self.partition_range.intersect(i),
            Bounded::Offset => self.offsets = self.offsets.intersect(i),
            Bounded::Timestamp => self.timestamps = self.timestamps.intersect(i),
        }
    }
}

/// The value of a literal compared with `col`: an integer for `partition` and `offset`, epoch
/// milliseconds for `timestamp` (rounded so that the interval holds every matching row).
fn literal(e: &Expr, col: Bounded) -> Option<i64> {
    let Expr::Literal(v, _) = e else { return None };
    match col {
        Bounded::Partition | Bounded::Offset => int_of(v),
        Bounded::Timestamp => ms_of(v),
    }
}

fn int_of(v: &ScalarValue) -> Option<i64> {
    match v {
        ScalarValue::Int8(Some(x)) => Some(i64::from(*x)),
        ScalarValue::Int16(Some(x)) => Some(i64::from(*x)),
        ScalarValue::Int32(Some(x)) => Some(i64::from(*x)),
        ScalarValue::Int64(Some(x)) => Some(*x),
        ScalarValue::UInt8(Some(x)) => Some(i64::from(*x)),
        ScalarValue::UInt16(Some(x)) => Some(i64::from(*x)),
        ScalarValue::UInt32(Some(x)) => Some(i64::from(*x)),
        ScalarValue::UInt64(Some(x)) => i64::try_from(*x).ok(),
        _ => None,
    }
}

/// Milliseconds of a timestamp literal. A finer literal that is not a whole millisecond bounds
/// nothing (rounding it either way could cut a row with one of the comparisons).
fn ms_of(v: &ScalarValue) -> Option<i64> {
    let (x, per_ms) = match v {
        ScalarValue::TimestampSecond(Some(x), _) => return x.checked_mul(1000),
        ScalarValue::TimestampMillisecond(Some(x), _) => return Some(*x),
        ScalarValue::TimestampMicrosecond(Some(x), _) => (*x, 1000),
        ScalarValue::TimestampNanosecond(Some(x), _) => (*x, 1_000_000),
        _ => return None,
    };
    (x.rem_euclid(per_ms) == 0).then(|| x.div_euclid(per_ms))
}
