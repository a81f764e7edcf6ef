//! `krecords_client::fuzzing::decode_response` on arbitrary bytes: the first byte picks the
//! response (ApiVersions, Metadata, ListOffsets, Fetch, SaslHandshake, SaslAuthenticate,
//! ListGroups, DescribeGroups with its members' consumer-protocol assignments,
//! ConsumerGroupDescribe), the second the version, the rest arrives as from a broker's socket (size field, header, body),
//! read with a 1 MiB `receive.message.max.bytes`. Every input ends in a decoded response or a
//! typed error: never a panic, never an allocation sized from a claimed length or count
//! (libFuzzer's -malloc_limit_mb catches those); Fetch records are walked with `Entries`.
#![no_main]

use krecords_client::fuzzing::decode_response;
use krecords_client::Error;
use libfuzzer_sys::fuzz_target;

const MAX: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let [api, version, wire @ ..] = data else {
        return;
    };
    match decode_response(*api, *version, wire, MAX) {
        Ok(d) => {
            assert!(d.frame_len + 4 <= wire.len());
            assert!(d.frame_len <= MAX);
        }
        Err(
            Error::FrameSize { .. }
            | Error::Truncated { .. }
            | Error::Disconnected { .. }
            | Error::Protocol { .. },
        ) => {}
        Err(e) => panic!("unexpected error kind: {e:?}"),
    }
});
