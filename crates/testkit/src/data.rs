//! Test and benchmark data shared by several crates' benches.

/// `size` bytes of record-like text (JSON lines: repeated field names, enum-like values, varying
/// ids, timestamps and amounts, a little free text), so the codecs see realistic ratios.
/// Deterministic: the same bytes on every call and machine, so benchmark runs compare.
pub fn json_lines(size: usize) -> Vec<u8> {
    const USERS: [&str; 8] = [
        "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
    ];
    const EVENTS: [&str; 5] = ["page_view", "click", "add_to_cart", "purchase", "logout"];
    const WORDS: [&str; 10] = [
        "fast", "blue", "order", "retry", "cache", "north", "gift", "promo", "mobile", "web",
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::with_capacity(size + 512);
    let mut ts = 1_714_000_000_000u64;
    let mut seq = 0u64;
    while out.len() < size {
        let r = next();
        ts += r % 50;
        let note: Vec<&str> = (0..(r >> 8) % 4)
            .map(|i| WORDS[((r >> (12 + i * 4)) % 10) as usize])
            .collect();
        let line = format!(
            "{{\"seq\":{seq},\"ts\":{ts},\"user\":\"{}\",\"session\":\"{:016x}\",\"event\":\"{}\",\"amount\":{}.{:02},\"note\":\"{}\"}}\n",
            USERS[(r % 8) as usize],
            next() & 0xffff_ffff_ffff,
            EVENTS[((r >> 3) % 5) as usize],
            (r >> 20) % 500,
            (r >> 30) % 100,
            note.join(" "),
        );
        out.extend_from_slice(line.as_bytes());
        seq += 1;
    }
    out.truncate(size);
    out
}
