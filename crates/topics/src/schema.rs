//! Kafka's message schemas (the JSON files of Kafka's jars), interpreted at run time: a message
//! is read from its binary form at a version, and written as Kafka's generated
//! `*JsonConverter.write(message, version)` writes it.
//!
//! Versions, flexible versions (compact lengths, tagged fields), nullable and tagged fields are
//! as the schema says. A version condition is decided the way Kafka's generator compiles it: a
//! condition that holds for every valid version of the message is no check at all (Kafka reads a
//! coordinator key with its record type as the version, and its fields, all "versions": "0",
//! are read whatever that number is).
//!
//! Bounded: every length is checked against the bytes left before anything is allocated, and
//! nesting is limited, so any input gives a value or an error, never a panic.

use super::value::Node;
use krecords_codec::varint::read_unsigned_varint;
use serde_json::Value;
use std::collections::HashMap;

/// A range of versions (`"0+"`, `"1-3"`, `"2"`, `"none"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    lo: i32,
    hi: i32,
}

impl Versions {
    const NONE: Versions = Versions { lo: 1, hi: 0 };

    fn parse(s: &str) -> Result<Versions, String> {
        let s = s.trim();
        if s == "none" {
            return Ok(Versions::NONE);
        }
        let num = |t: &str| {
            t.trim()
                .parse::<i32>()
                .map_err(|_| format!("bad versions {s:?}"))
        };
        if let Some(lo) = s.strip_suffix('+') {
            return Ok(Versions {
                lo: num(lo)?,
                hi: i16::MAX as i32,
            });
        }
        if let Some((lo, hi)) = s.split_once('-') {
            return Ok(Versions {
                lo: num(lo)?,
                hi: num(hi)?,
            });
        }
        let v = num(s)?;
        Ok(Versions { lo: v, hi: v })
    }

    fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    /// Whether `v` is in the range.
    pub fn contains(self, v: i32) -> bool {
        self.lo <= v && v <= self.hi
    }

    fn covers(self, o: Versions) -> bool {
        o.is_empty() || (self.lo <= o.lo && o.hi <= self.hi)
    }

    fn intersect(self, o: Versions) -> Versions {
        Versions {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
        }
    }

    /// The condition "version in self" as Kafka's generator compiles it, within `possible`.
    fn holds(self, possible: Versions, v: i32) -> bool {
        if self.covers(possible) {
            true
        } else if self.intersect(possible).is_empty() {
            false
        } else {
            self.contains(v)
        }
    }
}

/// A field's type.
#[derive(Debug, Clone)]
enum Type {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    Str,
    Bytes,
    Records,
    Uuid,
    Struct(usize),
    Array(Box<Type>),
}

/// One field of a struct.
#[derive(Debug, Clone)]
struct Field {
    /// The JSON name (the schema's name with its first letter in lower case).
    json_name: String,
    ty: Type,
    versions: Versions,
    nullable: Versions,
    tagged: Versions,
    tag: Option<u64>,
    default: Value,
}

/// A struct: the message itself, an inline struct or a common struct.
#[derive(Debug, Clone)]
struct Struct {
    /// The struct's type name (the message's name for the message itself).
    name: String,
    fields: Vec<Field>,
    /// The versions the struct exists in (the field's versions for a nested struct).
    versions: Versions,
}

/// One parsed schema file.
#[derive(Debug, Clone)]
pub struct Message {
    /// The schema's name (`TopicRecord`).
    pub name: String,
    /// The schema's `apiKey`.
    pub api_key: Option<i16>,
    /// The schema's `type` (`metadata`, `coordinator-key`, ...).
    pub kind: String,
    /// `validVersions`.
    pub valid: Versions,
    flexible: Versions,
    structs: Vec<Struct>,
    /// The index of the message's own struct in `structs`.
    root: usize,
}

/// Strips Kafka's whole-line `//` comments.
fn strip_comments(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A "default" as text ("-1", -1, "null", true, ...).
fn default_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Message {
    /// Parses a schema file.
    // Indexing a serde_json `Value` by key never panics (a missing key is `Null`); these read
    // the embedded schema files, not record bytes.
    #[allow(clippy::indexing_slicing)]
    pub fn parse(text: &str) -> Result<Message, String> {
        let v: Value = serde_json::from_str(&strip_comments(text)).map_err(|e| e.to_string())?;
        let name = v["name"].as_str().ok_or("no name")?.to_string();
        let valid = Versions::parse(v["validVersions"].as_str().ok_or("no validVersions")?)?;
        let flexible = Versions::parse(v["flexibleVersions"].as_str().unwrap_or("none"))?;
        let mut m = Message {
            name,
            api_key: v["apiKey"].as_i64().and_then(|k| i16::try_from(k).ok()),
            kind: v["type"].as_str().unwrap_or("").to_string(),
            valid,
            flexible,
            structs: Vec::new(),
            root: 0,
        };
        // Common structs first (by name), so that fields can refer to them.
        let mut names: HashMap<String, usize> = HashMap::new();
        let commons = v["commonStructs"].as_array().cloned().unwrap_or_default();
        for c in &commons {
            let n = c["name"].as_str().ok_or("common struct without a name")?;
            names.insert(n.to_string(), m.structs.len());
            m.structs.push(Struct {
                name: n.to_string(),
                fields: Vec::new(),
                versions: Versions::parse(c["versions"].as_str().unwrap_or("0+"))?,
            });
        }
        for c in &commons {
            let n = c["name"].as_str().unwrap_or_default();
            let fields = m.fields(&c["fields"], &mut names)?;
            m.set_fields(names.get(n).copied(), fields);
        }
        let root = m.structs.len();
        m.structs.push(Struct {
            name: m.name.clone(),
            fields: Vec::new(),
            versions: valid,
        });
        let fields = m.fields(&v["fields"], &mut names)?;
        m.set_fields(Some(root), fields);
        m.root = root;
        Ok(m)
    }

    /// Sets the fields of the struct at `idx` (pushed before its fields were parsed).
    fn set_fields(&mut self, idx: Option<usize>, fields: Vec<Field>) {
        if let Some(s) = idx.and_then(|i| self.structs.get_mut(i)) {
            s.fields = fields;
        }
    }

    // As in `parse`: indexing a serde_json `Value` by key never panics.
    #[allow(clippy::indexing_slicing)]
    fn fields(
        &mut self,
        list: &Value,
        names: &mut HashMap<String, usize>,
    ) -> Result<Vec<Field>, String> {
        let mut out = Vec::new();
        for f in list.as_array().map(Vec::as_slice).unwrap_or_default() {
            let name = f["name"].as_str().ok_or("field without a name")?;
            let tagged = match f["taggedVersions"].as_str() {
                Some(t) => Versions::parse(t)?,
                None => Versions::NONE,
            };
            let versions = match f["versions"].as_str() {
                Some(t) => Versions::parse(t)?,
                None => tagged,
            };
            let ty_name = f["type"].as_str().ok_or("field without a type")?;
            let ty = self.ty(ty_name, f, versions, names)?;
            let mut chars = name.chars();
            let json_name = chars
                .next()
                .map(|c| c.to_lowercase().collect::<String>() + chars.as_str())
                .unwrap_or_default();
            out.push(Field {
                json_name,
                ty,
                versions,
                nullable: match f["nullableVersions"].as_str() {
                    Some(t) => Versions::parse(t)?,
                    None => Versions::NONE,
                },
                tagged,
                tag: f["tag"].as_u64(),
                default: f.get("default").cloned().unwrap_or(Value::Null),
            });
        }
        Ok(out)
    }

    // As in `parse`: indexing a serde_json `Value` by key never panics.
    #[allow(clippy::indexing_slicing)]
    fn ty(
        &mut self,
        t: &str,
        f: &Value,
        versions: Versions,
        names: &mut HashMap<String, usize>,
    ) -> Result<Type, String> {
        if let Some(inner) = t.strip_prefix("[]") {
            return Ok(Type::Array(Box::new(self.ty(inner, f, versions, names)?)));
        }
        Ok(match t {
            "bool" => Type::Bool,
            "int8" => Type::Int8,
            "int16" => Type::Int16,
            "uint16" => Type::Uint16,
            "int32" => Type::Int32,
            "uint32" => Type::Uint32,
            "int64" => Type::Int64,
            "float64" => Type::Float64,
            "string" => Type::Str,
            "bytes" => Type::Bytes,
            "records" => Type::Records,
            "uuid" => Type::Uuid,
            name => {
                if f.get("fields").is_some_and(Value::is_array) {
                    let idx = self.structs.len();
                    names.insert(name.to_string(), idx);
                    self.structs.push(Struct {
                        name: name.to_string(),
                        fields: Vec::new(),
                        versions,
                    });
                    let fields = self.fields(&f["fields"], names)?;
                    self.set_fields(Some(idx), fields);
                    Type::Struct(idx)
                } else {
                    Type::Struct(
                        *names
                            .get(name)
                            .ok_or_else(|| format!("unknown type {name}"))?,
                    )
                }
            }
        })
    }

    /// Reads the message at `version` from the start of `buf`; returns the JSON tree and the
    /// bytes after the message.
    pub fn read<'a>(&self, buf: &'a [u8], version: i16) -> Result<(Node, &'a [u8]), String> {
        let mut r = Reader {
            rest: buf,
            depth: 0,
        };
        let v = self.read_struct(&mut r, self.root, i32::from(version), self.valid)?;
        Ok((v, r.rest))
    }

    fn flexible(&self, v: i32) -> bool {
        self.flexible.holds(self.valid, v)
    }

    fn read_struct(
        &self,
        r: &mut Reader<'_>,
        idx: usize,
        v: i32,
        possible: Versions,
    ) -> Result<Node, String> {
        r.depth = r.depth.saturating_add(1);
        if r.depth > 64 {
            return Err("structs nested too deep".into());
        }
        let s = self.structs.get(idx).ok_or("unknown struct")?;
        // Kafka's nested structs refuse a version above the message's highest (the message
        // itself reads any).
        if idx != self.root && v > self.valid.hi {
            return Err(format!("Can't read version {v} of {}", s.name));
        }
        let possible = possible.intersect(s.versions);
        let flexible = self.flexible(v);
        let mut out: Vec<(String, Node)> = Vec::new();
        // Values in schema order: Some(value) for a present field, None for an absent tagged one.
        let mut values: Vec<Option<Node>> = vec![None; s.fields.len()];
        for (f, value) in s.fields.iter().zip(values.iter_mut()) {
            if !f.versions.holds(possible, v) {
                continue;
            }
            if flexible && f.tagged.holds(possible, v) {
                continue; // read with the tagged fields below
            }
            *value = Some(self.read_value(r, f, &f.ty, v, possible, flexible)?);
        }
        if flexible {
            let n = r.int_varint()?;
            if n < 0 {
                return Err(format!("Invalid negative number of tagged fields {n}"));
            }
            if n as usize > r.remaining() {
                return Err(format!(
                    "Tried to read {n} tagged fields, but there are only {} bytes remaining.",
                    r.remaining()
                ));
            }
            if n > 10_000 {
                return Err(format!("Tried to read {n} tagged fields, which exceeds the maximum allowed count of 10000."));
            }
            for _ in 0..n {
                let tag = r.int_varint()?;
                let size = r.int_varint()?;
                let with_tag = |f: &Field| u64::try_from(tag).is_ok_and(|t| f.tag == Some(t));
                let known = s
                    .fields
                    .iter()
                    .zip(values.iter_mut())
                    .find(|(f, _)| with_tag(f) && f.tagged.holds(possible, v));
                match known {
                    // As Kafka's generated code: a known tag's value is read in place, whatever
                    // its size says; a tag of another version is an error; an unknown one's
                    // bytes are skipped.
                    Some((f, value)) => {
                        *value = Some(self.read_value(r, f, &f.ty, v, possible, true)?);
                    }
                    None if s.fields.iter().any(with_tag) => {
                        return Err(format!("Tag {tag} is not valid for version {v}"));
                    }
                    None => {
                        // Java's NegativeArraySizeException says the size.
                        let size = usize::try_from(size).map_err(|_| size.to_string())?;
                        r.take_bytes(size)?;
                    }
                }
            }
        }
        for (f, value) in s.fields.iter().zip(values) {
            if !f.versions.holds(possible, v) {
                continue;
            }
            let tagged = flexible && f.tagged.holds(possible, v);
            match value {
                // A tagged field is written only when it differs from its default (a struct's
                // default is the struct of defaults, so a null one is written).
                Some(val) if tagged && self.is_default(&val, f) => {}
                Some(val) => out.push((f.json_name.clone(), val)),
                None => {}
            }
        }
        r.depth = r.depth.saturating_sub(1);
        Ok(Node::Obj(out))
    }

    fn read_value(
        &self,
        r: &mut Reader<'_>,
        f: &Field,
        ty: &Type,
        v: i32,
        possible: Versions,
        flexible: bool,
    ) -> Result<Node, String> {
        let nullable = f.nullable.holds(possible, v);
        let null = || {
            if nullable {
                Ok(Node::Null)
            } else {
                Err(format!(
                    "non-nullable field {} was serialized as null",
                    f.json_name
                ))
            }
        };
        Ok(match ty {
            Type::Bool => Node::Bool(r.byte()? != 0),
            Type::Int8 => Node::Int(i64::from(r.byte()? as i8)),
            Type::Int16 => Node::Int(i64::from(i16::from_be_bytes(r.array()?))),
            Type::Uint16 => Node::Int(i64::from(u16::from_be_bytes(r.array()?))),
            Type::Int32 => Node::Int(i64::from(i32::from_be_bytes(r.array()?))),
            Type::Uint32 => Node::Int(i64::from(u32::from_be_bytes(r.array()?))),
            Type::Int64 => Node::Int(i64::from_be_bytes(r.array()?)),
            Type::Float64 => Node::Float(f64::from_be_bytes(r.array()?)),
            Type::Uuid => {
                let b: [u8; 16] = r.array()?;
                use base64::Engine;
                Node::Str(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
            }
            Type::Str => {
                let len = r.length(flexible, false)?;
                if len < 0 {
                    return null();
                }
                if len > i64::from(i16::MAX) {
                    return Err(format!(
                        "string field {} had invalid length {len}",
                        f.json_name
                    ));
                }
                let b = r.take_bytes(len as usize)?;
                Node::Str(krecords_codec::java_text::decode(b))
            }
            Type::Bytes | Type::Records => {
                let len = r.length(flexible, true)?;
                if len < 0 {
                    return null();
                }
                Node::Bin(
                    r.take_bytes(usize::try_from(len).map_err(|_| "too long")?)?
                        .to_vec(),
                )
            }
            Type::Struct(idx) => {
                // A nullable struct's presence: in flexible versions an unsigned varint, present
                // when above 0 (as a Java int); otherwise a byte, null when negative.
                if nullable {
                    let present = if flexible {
                        r.int_varint()? > 0
                    } else {
                        (r.byte()? as i8) >= 0
                    };
                    if !present {
                        return Ok(Node::Null);
                    }
                }
                self.read_struct(r, *idx, v, possible)?
            }
            Type::Array(inner) => {
                let len = if flexible {
                    i64::from(r.int_varint()?).saturating_sub(1)
                } else {
                    i64::from(i32::from_be_bytes(r.array()?))
                };
                if len < 0 {
                    return null();
                }
                // A length beyond the bytes left is an error before anything is allocated (as
                // Kafka's generated code checks it).
                let len = len as usize;
                if len > r.remaining() {
                    return Err(format!(
                        "Tried to allocate a collection of size {len}, but there are only {} bytes remaining.",
                        r.remaining()
                    ));
                }
                if len > 1_000_000 {
                    return Err(format!("Tried to read a collection of size {len}, which exceeds the maximum allowed size of 1000000."));
                }
                let mut a = Vec::with_capacity(len);
                // Kafka's messages name an element "FIELD element".
                let elem = Field {
                    nullable: Versions::NONE,
                    json_name: format!("{} element", f.json_name),
                    ..f.clone()
                };
                for _ in 0..len {
                    a.push(self.read_value(r, &elem, inner, v, possible, flexible)?);
                }
                Node::Arr(a)
            }
        })
    }
}

impl Message {
    /// Whether a tagged field's value is its default (then Kafka's JSON converter leaves it
    /// out). A struct's default is the struct of its fields' defaults, never null.
    fn is_default(&self, val: &Node, f: &Field) -> bool {
        match (val, &f.ty) {
            (Node::Null, Type::Struct(_)) => false,
            (Node::Obj(fields), Type::Struct(idx)) => self.structs.get(*idx).is_some_and(|s| {
                s.fields.iter().all(|sf| {
                    fields
                        .iter()
                        .find(|(k, _)| *k == sf.json_name)
                        .is_none_or(|(_, v)| self.is_default(v, sf))
                })
            }),
            _ => is_default(val, f),
        }
    }
}

/// Whether a value is its field's default.
fn is_default(val: &Node, f: &Field) -> bool {
    let d = default_text(&f.default);
    match (val, &f.ty) {
        (Node::Null, _) => d.as_deref().is_none_or(|d| d == "null"),
        (Node::Bool(b), _) => d.as_deref().unwrap_or("false") == if *b { "true" } else { "false" },
        (Node::Int(i), _) => parse_int(d.as_deref().unwrap_or("0")) == Some(*i),
        (Node::Float(x), _) => d.as_deref().unwrap_or("0").parse::<f64>().ok() == Some(*x),
        (Node::Str(s), Type::Uuid) => s == "AAAAAAAAAAAAAAAAAAAAAA",
        (Node::Str(s), _) => {
            d.as_deref().is_some_and(|d| d != "null" && d == s) || (d.is_none() && s.is_empty())
        }
        (Node::Bin(b), _) => b.is_empty() && d.is_none(),
        (Node::Arr(a), _) => a.is_empty() && d.is_none(),
        (Node::Obj(_), _) => false,
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok();
    }
    s.parse().ok()
}

/// A cursor over a message's bytes.
struct Reader<'a> {
    /// The bytes not read yet.
    rest: &'a [u8],
    /// Structs being read, one inside the other.
    depth: u32,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// `n` bytes of a fixed-size value; short, Java's `BufferUnderflowException` (no message,
    /// so "null" in Kafka's text).
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let (s, rest) = self.rest.split_at_checked(n).ok_or("null")?;
        self.rest = rest;
        Ok(s)
    }

    /// A string's or a byte array's `n` bytes (ByteBufferAccessor's message when short).
    fn take_bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.remaining() {
            return Err(format!(
                "Error reading byte array of {n} byte(s): only {} byte(s) available",
                self.remaining()
            ));
        }
        self.take(n)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let (a, rest) = self.rest.split_first_chunk::<N>().ok_or("null")?;
        self.rest = rest;
        Ok(*a)
    }

    fn byte(&mut self) -> Result<u8, String> {
        let [b] = self.array::<1>()?;
        Ok(b)
    }

    /// The length before a string (`wide`: bytes or records): in flexible versions an unsigned
    /// varint of length + 1, otherwise an int16 (an int32 when `wide`); negative is null.
    fn length(&mut self, flexible: bool, wide: bool) -> Result<i64, String> {
        Ok(if flexible {
            i64::from(self.int_varint()?).saturating_sub(1)
        } else if wide {
            i64::from(i32::from_be_bytes(self.array()?))
        } else {
            i64::from(i16::from_be_bytes(self.array()?))
        })
    }

    /// Kafka's `ByteUtils.readUnsignedVarint` (at most 5 bytes) as the Java int it returns
    /// (2^31 and above negative), with Kafka's messages: "null" (`BufferUnderflowException`)
    /// when the bytes end inside it, and the one for a fifth byte that says more follow.
    fn int_varint(&mut self) -> Result<i32, String> {
        match read_unsigned_varint(self.rest, 0) {
            Ok((v, n)) => {
                self.rest = self.rest.get(n..).unwrap_or_default();
                Ok(v as i32)
            }
            Err(krecords_codec::Error::InvalidVarint { .. }) => {
                // Java's value so far: the low 7 bits of each of the 5 bytes, the fifth's
                // shifted out past bit 31.
                let v = self
                    .rest
                    .iter()
                    .take(5)
                    .enumerate()
                    .fold(0u32, |v, (i, b)| {
                        v | u32::from(b & 0x7f).wrapping_shl(7u32.wrapping_mul(i as u32))
                    });
                Err(format!("Varint is too long, the most significant bit in the 5th byte is set, converted value: {v:x}"))
            }
            Err(_) => Err("null".into()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_conditions() {
        let p = Versions::parse("0-3").unwrap();
        assert!(Versions::parse("0+").unwrap().holds(p, 9));
        assert!(!Versions::parse("none").unwrap().holds(p, 0));
        assert!(Versions::parse("1+").unwrap().holds(p, 2));
        assert!(!Versions::parse("1+").unwrap().holds(p, 0));
        // "0" within validVersions "0" holds at any version (a coordinator key's record type).
        let k = Versions::parse("0").unwrap();
        assert!(k.holds(k, 5));
    }
}
