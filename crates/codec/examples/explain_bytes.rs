//! Explains a few entries field by field, as `krec explain` does: a sound v2 batch, a copy of it
//! with one flipped bit, and a truncated tail, all made here.
//!
//! Run with `cargo run -p krecords-codec --example explain_bytes`.

use krecords_codec::explain::{Explainer, Item, Value};
use krecords_codec::write::{NewRecord, V2Builder};

fn main() -> std::io::Result<()> {
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(1714000000000, Some(b"k"), Some(b"hello")))
        .expect("a small record fits");
    let batch = b.finish().expect("a batch of one record");
    let mut damaged = batch.clone();
    let last_value_byte = damaged.len() - 2; // before the header count
    damaged[last_value_byte] ^= 1;
    let input = [batch.clone(), damaged, batch[..40].to_vec()].concat();

    let summary = Explainer::new(1 << 20).explain_bytes(&input, &mut |item: &Item<'_>| {
        match item {
            Item::Heading { text, .. } => println!("# {text}"),
            Item::Field(f) => {
                let value = match &f.value {
                    Value::Int(n) => n.to_string(),
                    Value::Text(s) => s.clone(),
                    Value::Content => format!("{:?}", String::from_utf8_lossy(f.bytes)),
                };
                let note = f.note.as_deref().unwrap_or("");
                println!("{:>6}  {:<28} {value} {note}", f.at.label(), f.name);
            }
            Item::Error { at, message } => println!("{:>6}  error: {message}", at.label()),
        }
        Ok(())
    })?;
    println!(
        "{} entries, {} problems (a CRC mismatch and a truncated tail)",
        summary.entries, summary.problems
    );
    Ok(())
}
