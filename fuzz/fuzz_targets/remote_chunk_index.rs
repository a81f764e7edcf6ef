//! Aiven tiered-storage chunk indexes. The input drives three parsers: the binary list of chunk
//! sizes (`decode_chunk_sizes`: never panics; what it accepts re-encodes to a list that decodes
//! to the same sizes, and never to more bytes than the input), the base64 + zstd wrapping
//! (`decode_transformed_chunks` with a 1 MiB cap), and `ChunkIndex::new` with the first 8 bytes
//! as original chunk and file sizes: every chunk found for a byte range holds that byte, and
//! `chunks_for_range` covers the range with consecutive chunks.
#![no_main]

use krecords_remote::chunk_index::{
    decode_chunk_sizes, decode_transformed_chunks, encode_chunk_sizes, ChunkIndex, ChunkSizes,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(sizes) = decode_chunk_sizes(data) {
        let encoded = encode_chunk_sizes(&sizes).expect("decoded sizes are ints");
        assert!(encoded.len() <= data.len());
        assert_eq!(
            decode_chunk_sizes(&encoded).expect("re-encoded list decodes"),
            sizes
        );
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = decode_transformed_chunks(text, 1 << 20);
    }
    let Some((head, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let ocs = i64::from(i32::from_be_bytes([head[0], head[1], head[2], head[3]]));
    let ofs = i64::from(i32::from_be_bytes([head[4], head[5], head[6], head[7]]));
    let Ok(sizes) = decode_chunk_sizes(rest) else {
        return;
    };
    let fixed = ChunkSizes::Fixed {
        transformed_chunk_size: sizes.first().copied().unwrap_or(0),
        final_transformed_chunk_size: sizes.last().copied().unwrap_or(0),
    };
    for kind in [fixed, ChunkSizes::Variable(sizes)] {
        let Ok(index) = ChunkIndex::new(ocs, ofs, kind) else {
            continue;
        };
        let size = u64::from(index.original_file_size());
        for at in [
            0,
            1,
            size / 3,
            size / 2,
            size.saturating_sub(1),
            size,
            size + 1,
        ] {
            match index.chunk_at(at) {
                Some(c) => {
                    assert!(at < size);
                    assert!(
                        c.original_position <= at
                            && at < c.original_position + u64::from(c.original_size)
                    );
                }
                None => assert!(at >= size),
            }
        }
        let (start, end) = (size / 3, size / 2 + 1);
        let covering: Vec<_> = index.chunks_for_range(start, end).take(100_000).collect();
        if covering.len() < 100_000 {
            for pair in covering.windows(2) {
                assert_eq!(pair[0].id + 1, pair[1].id);
                assert_eq!(
                    pair[0].original_position + u64::from(pair[0].original_size),
                    pair[1].original_position
                );
            }
            if let (Some(first), Some(last)) = (covering.first(), covering.last()) {
                assert!(first.original_position <= start);
                assert!(last.original_position + u64::from(last.original_size) >= end.min(size));
            } else {
                assert!(start >= end.min(size));
            }
        }
    }
});
