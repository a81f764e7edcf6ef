//! Machine limits, measured on the same bytes as the workload: how fast the memory can be read,
//! how fast CRC-32C runs, and how fast each codec decompresses the same compressed blocks without
//! Kafka's framing, bounds checks or output growth.

use std::ops::Range;

use krecords_codec::read::Entries;
use krecords_codec::Compression;

/// Sum of `buf` as 64-bit words (eight independent accumulators, so the loop is bound by loads,
/// not by one add chain): the memory read bandwidth limit.
#[allow(clippy::little_endian_bytes)] // a sum of words: their byte order is irrelevant
pub(crate) fn mem_sum(buf: &[u8]) -> u64 {
    let mut acc = [0u64; 8];
    let mut chunks = buf.chunks_exact(64);
    for c in &mut chunks {
        for (j, a) in acc.iter_mut().enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&c[j * 8..j * 8 + 8]);
            *a = a.wrapping_add(u64::from_le_bytes(w));
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(0u64, |s, &b| s.wrapping_add(u64::from(b)));
    acc.iter().fold(tail, |s, &a| s.wrapping_add(a))
}

/// CRC-32C of all of `buf` (the `crc32c` crate: SSE4.2 `crc32` instructions, three streams).
pub(crate) fn crc(buf: &[u8]) -> u64 {
    u64::from(crc32c::crc32c(buf))
}

/// CRC-32C through the `crc-fast` crate, which folds with AVX-512 VPCLMULQDQ where the CPU has it
/// (the `crc32c` crate uses the SSE4.2 `crc32` instruction): what CRC-32C could cost.
pub(crate) fn crc_fast(buf: &[u8]) -> u64 {
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, buf)
}

/// Our decompression alone (Kafka's framing through `krecords_codec::compression::decompress`,
/// bounded, into a reused buffer) of every batch, without CRC or record parsing: the part of our
/// decode that the raw codec row is the limit for.
///
/// # Panics
///
/// On a decode error (the workload decoded once before).
pub(crate) fn framed_decompress(bytes: &[u8], codec: Compression, scratch: &mut Vec<u8>) -> u64 {
    let mut total = 0u64;
    for batch in Entries::new(bytes) {
        if let Ok(krecords_codec::read::Batch::V2(b)) = batch {
            scratch.clear();
            krecords_codec::compression::decompress(
                codec,
                2,
                b.records_section(),
                krecords_codec::DEFAULT_DECOMPRESS_LIMIT,
                0,
                scratch,
            )
            .expect("decompress");
            total += scratch.len() as u64;
        }
    }
    total
}

/// One codec block of a batch's records section, as the raw codec sees it.
#[derive(Debug, Clone)]
struct Block {
    /// Compressed bytes, as a range of the workload buffer.
    data: Range<usize>,
    /// Where its output goes in the batch's decompressed records.
    out: Range<usize>,
    /// An LZ4 block Kafka stored uncompressed (copied, not decoded).
    stored: bool,
}

/// The compressed blocks of every batch of a workload, framing stripped: gzip's deflate stream
/// (no header, trailer or CRC-32), snappy's raw blocks (no xerial chunk headers), LZ4's blocks (no
/// frame), zstd's frame (zstd has no separate framing; decoded in one shot into a buffer of known
/// size rather than streamed).
pub(crate) struct RawPayloads {
    codec: Compression,
    batches: Vec<Vec<Block>>,
    out: Vec<u8>,
    inflate: flate2::Decompress,
    zstd: zstd::bulk::Decompressor<'static>,
}

fn le32(b: &[u8]) -> u32 {
    u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16 | u32::from(b[3]) << 24
}

impl RawPayloads {
    /// Finds the blocks in `bytes` (entries written by our builder with `codec`).
    ///
    /// # Errors
    ///
    /// Framing this parser does not expect, as text.
    pub fn new(bytes: &[u8], codec: Compression) -> Result<Self, String> {
        let mut batches = Vec::new();
        let mut max_out = 0;
        let mut scratch = Vec::new();
        for batch in Entries::new(bytes) {
            let batch = batch.map_err(|e| e.to_string())?;
            let krecords_codec::read::Batch::V2(v2) = batch else {
                return Err("not a v2 batch".into());
            };
            let section = v2.records_section();
            let base = v2.position() + krecords_codec::layout::v2::RECORDS_OFFSET;
            let mut blocks = Vec::new();
            let mut out_pos = 0;
            let mut push = |data: Range<usize>, len: usize, stored: bool| {
                blocks.push(Block {
                    data: data.start + base..data.end + base,
                    out: out_pos..out_pos + len,
                    stored,
                });
                out_pos += len;
            };
            match codec {
                Compression::None => return Err("uncompressed".into()),
                Compression::Gzip => {
                    if section.len() < 18 || section[..4] != [0x1f, 0x8b, 8, 0] {
                        return Err("unexpected gzip header".into());
                    }
                    let isize = le32(&section[section.len() - 4..]) as usize;
                    push(10..section.len() - 8, isize, false);
                }
                Compression::Snappy => {
                    let mut pos = 16;
                    while pos < section.len() {
                        let n =
                            u32::from_be_bytes(section[pos..pos + 4].try_into().expect("4 bytes"))
                                as usize;
                        let block = &section[pos + 4..pos + 4 + n];
                        let len = snap::raw::decompress_len(block).map_err(|e| e.to_string())?;
                        push(pos + 4..pos + 4 + n, len, false);
                        pos += 4 + n;
                    }
                }
                Compression::Lz4 => {
                    if section.len() < 11 || section[4] != 0x60 {
                        return Err("unexpected lz4 frame descriptor".into());
                    }
                    let mut pos = 7;
                    let mut tmp = vec![0u8; 64 << 10];
                    loop {
                        let word = le32(&section[pos..pos + 4]);
                        let size = (word & 0x7fff_ffff) as usize;
                        if size == 0 {
                            break;
                        }
                        let block = &section[pos + 4..pos + 4 + size];
                        let stored = word & 0x8000_0000 != 0;
                        let len = if stored {
                            size
                        } else {
                            lz4_flex::block::decompress_into(block, &mut tmp)
                                .map_err(|e| e.to_string())?
                        };
                        push(pos + 4..pos + 4 + size, len, stored);
                        pos += 4 + size;
                    }
                }
                Compression::Zstd => {
                    scratch.clear();
                    krecords_codec::compression::decompress(
                        codec,
                        2,
                        section,
                        usize::MAX,
                        0,
                        &mut scratch,
                    )
                    .map_err(|e| e.to_string())?;
                    push(0..section.len(), scratch.len(), false);
                }
            }
            max_out = max_out.max(out_pos);
            batches.push(blocks);
        }
        Ok(RawPayloads {
            codec,
            batches,
            out: vec![0; max_out],
            inflate: flate2::Decompress::new(false),
            zstd: zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?,
        })
    }

    /// The codec library's name and call, for the table.
    pub fn label(&self) -> &'static str {
        match self.codec {
            Compression::Gzip => "raw inflate (flate2/zlib-rs)",
            Compression::Snappy => "raw snappy blocks (snap)",
            Compression::Lz4 => "raw lz4 blocks (lz4_flex)",
            Compression::Zstd => "raw zstd one-shot (libzstd)",
            Compression::None => "-",
        }
    }

    /// Decompresses every block of every batch (each batch into the same preallocated buffer, as
    /// a reader reuses its scratch); returns the bytes produced.
    ///
    /// # Panics
    ///
    /// If a block fails to decode (they all decoded once in [`RawPayloads::new`]).
    pub fn decompress_all(&mut self, bytes: &[u8]) -> u64 {
        let mut total = 0u64;
        for blocks in &self.batches {
            for b in blocks {
                let src = &bytes[b.data.clone()];
                let dst = &mut self.out[b.out.clone()];
                let n = match self.codec {
                    Compression::Gzip => {
                        self.inflate.reset(false);
                        let status = self
                            .inflate
                            .decompress(src, dst, flate2::FlushDecompress::Finish)
                            .expect("inflate");
                        assert_eq!(status, flate2::Status::StreamEnd);
                        self.inflate.total_out() as usize
                    }
                    Compression::Snappy => snap::raw::Decoder::new()
                        .decompress(src, dst)
                        .expect("snappy"),
                    Compression::Lz4 if b.stored => {
                        dst.copy_from_slice(src);
                        src.len()
                    }
                    Compression::Lz4 => lz4_flex::block::decompress_into(src, dst).expect("lz4"),
                    Compression::Zstd => self.zstd.decompress_to_buffer(src, dst).expect("zstd"),
                    Compression::None => 0,
                };
                total += n as u64;
            }
        }
        total
    }
}
