//! A decoded message as a tree, and its two renderings: Jackson's `JsonNode.toString()` (what
//! kafka-dump-log prints) and serde_json's form (krec's JSON Lines).

use base64::Engine;

/// A JSON value as Kafka's generated `*JsonConverter.write` builds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `NullNode`.
    Null,
    /// `BooleanNode`.
    Bool(bool),
    /// `ShortNode`/`IntNode`/`LongNode` (uint16/uint32 as `IntNode`/`LongNode`).
    Int(i64),
    /// `DoubleNode`.
    Float(f64),
    /// `TextNode`.
    Str(String),
    /// `BinaryNode`: base64 (standard alphabet, padded) when printed.
    Bin(Vec<u8>),
    /// `ArrayNode`.
    Arr(Vec<Node>),
    /// `ObjectNode`, fields in insertion order.
    Obj(Vec<(String, Node)>),
}

impl Node {
    /// The field `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Node> {
        match self {
            Node::Obj(f) => f.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The field `name` of an object, mutable.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Node> {
        match self {
            Node::Obj(f) => f.iter_mut().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets (replacing in place, or appending) the field `name` of an object.
    pub fn put(&mut self, name: &str, v: Node) {
        if let Node::Obj(f) = self {
            match f.iter_mut().find(|(k, _)| k == name) {
                Some(slot) => slot.1 = v,
                None => f.push((name.to_string(), v)),
            }
        }
    }

    /// The text of a string node.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number of an integer node.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Node::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// Jackson's `toString()`.
    pub fn to_java(&self) -> String {
        let mut s = String::new();
        self.write_java(&mut s);
        s
    }

    fn write_java(&self, s: &mut String) {
        match self {
            Node::Null => s.push_str("null"),
            Node::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
            Node::Int(i) => s.push_str(&i.to_string()),
            Node::Float(f) => s.push_str(&java_double(*f)),
            Node::Str(t) => java_string(s, t),
            Node::Bin(b) => {
                s.push('"');
                s.push_str(&base64::engine::general_purpose::STANDARD.encode(b));
                s.push('"');
            }
            Node::Arr(a) => {
                s.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    v.write_java(s);
                }
                s.push(']');
            }
            Node::Obj(f) => {
                s.push('{');
                for (i, (k, v)) in f.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    java_string(s, k);
                    s.push(':');
                    v.write_java(s);
                }
                s.push('}');
            }
        }
    }

    /// The same tree as a serde_json value (binary as base64 text, non-finite doubles as text).
    pub fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => Value::from(*i),
            Node::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .unwrap_or_else(|| Value::String(java_double(*f))),
            Node::Str(t) => Value::String(t.clone()),
            Node::Bin(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
            Node::Arr(a) => Value::Array(a.iter().map(Node::to_serde).collect()),
            Node::Obj(f) => {
                Value::Object(f.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect())
            }
        }
    }
}

/// A JSON string as Jackson writes it: `"`, `\` and control characters escaped (`\n`, `\t`,
/// `\r`, `\b`, `\f`, else `\u00XX` with upper-case hex), everything else as it is.
fn java_string(s: &mut String, t: &str) {
    s.push('"');
    for c in t.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\r' => s.push_str("\\r"),
            '\u{8}' => s.push_str("\\b"),
            '\u{c}' => s.push_str("\\f"),
            c if (c as u32) < 0x20 => s.push_str(&format!("\\u{:04X}", c as u32)),
            c => s.push(c),
        }
    }
    s.push('"');
}

/// Java's `Double.toString` (shortest digits that round-trip, as JDK 19+).
pub(crate) fn java_double(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: d[.ddd]e[-]N. Java takes, of the
    // decimals of that length (2 at least), the closest to the value, ties to an even digit:
    // the correctly rounded one (`{:.Ne}` rounds exactly, half to even) when it reads back as
    // the same double.
    let shortest = format!("{:e}", f.abs());
    let len = shortest
        .split_once('e')
        .map_or(1, |(m, _)| m.chars().filter(char::is_ascii_digit).count());
    let rounded = format!("{:.*e}", len.max(2).saturating_sub(1), f.abs());
    let e = if rounded.parse::<f64>().ok() == Some(f.abs()) {
        rounded
    } else {
        shortest
    };
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let digits = match digits.trim_end_matches('0') {
        "" => "0",
        d => d,
    };
    let sign = if f < 0.0 { "-" } else { "" };
    let a = f.abs();
    if (1e-3..1e7).contains(&a) {
        // Digits before the decimal point (exp is -3..=6 here).
        let point = exp.saturating_add(1);
        let s = match usize::try_from(point) {
            Err(_) | Ok(0) => {
                format!("0.{}{}", "0".repeat(point.unsigned_abs() as usize), digits)
            }
            Ok(point) => match digits.split_at_checked(point) {
                Some((int, frac)) if !frac.is_empty() => format!("{int}.{frac}"),
                _ => format!(
                    "{digits}{}.0",
                    "0".repeat(point.saturating_sub(digits.len()))
                ),
            },
        };
        format!("{sign}{s}")
    } else {
        let (first, rest) = digits.split_at_checked(1).unwrap_or(("0", ""));
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn doubles_as_java() {
        for (f, s) in [
            (1.0, "1.0"),
            (100.0, "100.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1e7, "1.0E7"),
            (1234567.5, "1234567.5"),
            (-2.5e-10, "-2.5E-10"),
            (0.1, "0.1"),
            // 100 + 2^-15: 17 digits, ...8125 exactly, a tie Java breaks to the even digit.
            (100.0 + 1.0 / 32768.0, "100.00003051757812"),
            (1e23, "1.0E23"),
        ] {
            assert_eq!(java_double(f), s);
        }
    }

    /// Pinned difference: krec prints doubles as JDK 19+'s Double.toString (the shortest
    /// decimal); JDK 17's, which kafka-dump-log on Java 17 uses, prints a longer one for a few
    /// values: 1.9999999999999998E23 for 2e23, 9.999999999999999E22 for 1e23,
    /// 8.409999999999999E21 for 8.41e21, 4.9E-324 for Double.MIN_VALUE. (Only ClientQuotaRecord's
    /// value is a float64 among the internal topics' schemas.)
    #[test]
    fn doubles_as_jdk19_not_jdk17() {
        assert_eq!(java_double(2e23), "2.0E23");
        assert_eq!(java_double(1e23), "1.0E23");
        assert_eq!(java_double(8.41e21), "8.41E21");
        assert_eq!(java_double(f64::from_bits(1)), "4.9E-324");
    }

    #[test]
    fn strings_as_jackson() {
        let mut s = String::new();
        java_string(&mut s, "a\"\\\n\u{1}é");
        assert_eq!(s, "\"a\\\"\\\\\\n\\u0001é\"");
    }
}
