//! Entry point of the `client_response` fuzz target: not part of the stable API.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use kafka_protocol::messages::{
    ApiVersionsRequest, ConsumerGroupDescribeRequest, DescribeGroupsRequest, FetchRequest,
    ListGroupsRequest, ListOffsetsRequest, MetadataRequest, SaslAuthenticateRequest,
    SaslHandshakeRequest,
};
use kafka_protocol::protocol::Request;
use krecords_codec::read::Entries;

use crate::conn::{decode_body, name_of, read_frame, split_header};
use crate::error::Result;

/// What [`decode_response`] decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The request whose response the bytes were read as (`Fetch`, ...).
    pub request: String,
    /// The version used.
    pub version: i16,
    /// The frame's size, without its size field.
    pub frame_len: usize,
    /// For Fetch: the whole log entries found in all partitions' records; for DescribeGroups:
    /// the member assignments that decode.
    pub entries: usize,
}

/// Reads `wire` as a response arriving on a socket (size field, header, body) to the request
/// chosen by `api` (ApiVersions, Metadata, ListOffsets, Fetch, SaslHandshake, SaslAuthenticate,
/// ListGroups, DescribeGroups, ConsumerGroupDescribe, modulo 9) at `version` (mapped into the versions this client supports), with `max` as
/// `receive.message.max.bytes`, exactly as the client does (the correlation id is not checked).
/// A Fetch response's records are walked with [`Entries`]; a DescribeGroups response's member
/// assignments are decoded as the consumer protocol's (counted in [`Decoded::entries`]).
///
/// # Errors
///
/// The client's typed error for the frame or the body.
///
/// No re-encoding check: kafka-protocol 0.18 does not round-trip every decodable response (an
/// unknown tagged field numbered 2^31 or above decodes to a negative tag that its encoder
/// counts but skips), and that is not this client's concern.
///
/// # Panics
///
/// When the frame read breaks its size bounds, or the entries walk loses bytes: the properties
/// the fuzz target checks.
pub fn decode_response(api: u8, version: u8, wire: &[u8], max: usize) -> Result<Decoded> {
    match api % 9 {
        0 => decode::<ApiVersionsRequest>(version, wire, max, |_| 0),
        1 => decode::<MetadataRequest>(version, wire, max, |_| 0),
        2 => decode::<ListOffsetsRequest>(version, wire, max, |_| 0),
        3 => decode::<FetchRequest>(version, wire, max, |resp| {
            let mut n = 0;
            for p in resp.responses.iter().flat_map(|t| &t.partitions) {
                if let Some(records) = &p.records {
                    let mut entries = Entries::new(records);
                    while let Ok(Some(_)) = entries.next_entry() {
                        n += 1;
                    }
                    let end = entries.next_position();
                    assert!(end <= records.len());
                    if let Some(partial) = entries.partial() {
                        assert_eq!(partial.position + partial.bytes, records.len());
                    }
                }
            }
            n
        }),
        4 => decode::<SaslHandshakeRequest>(version, wire, max, |_| 0),
        5 => decode::<SaslAuthenticateRequest>(version, wire, max, |_| 0),
        6 => decode::<ListGroupsRequest>(version, wire, max, |_| 0),
        7 => decode::<DescribeGroupsRequest>(version, wire, max, |resp| {
            resp.groups
                .iter()
                .flat_map(|g| &g.members)
                .filter_map(|m| crate::groups::consumer_assignment(m.member_assignment.clone()))
                .count()
        }),
        _ => decode::<ConsumerGroupDescribeRequest>(version, wire, max, |_| 0),
    }
}

fn decode<R>(
    version: u8,
    wire: &[u8],
    max: usize,
    walk: impl FnOnce(&R::Response) -> usize,
) -> Result<Decoded>
where
    R: Request,
{
    let span = (R::VERSIONS.max - R::VERSIONS.min + 1) as u8;
    let version = R::VERSIONS.min + i16::from(version % span);
    let request = name_of::<R>();
    let mut reader = wire;
    let frame = {
        let fut = pin!(read_frame(&mut reader, max));
        let mut cx = Context::from_waker(Waker::noop());
        match fut.poll(&mut cx) {
            Poll::Ready(r) => r.map_err(|e| e.into_error("fuzz", request, max))?,
            Poll::Pending => unreachable!("reading a slice never waits"),
        }
    };
    let frame_len = frame.len();
    assert!((4..=max).contains(&frame_len));
    assert_eq!(
        i32::from_be_bytes([wire[0], wire[1], wire[2], wire[3]]) as usize,
        frame_len
    );
    let (_, body) = split_header::<R>("fuzz", frame, version)?;
    let resp = decode_body::<R>("fuzz", body, version)?;
    let entries = walk(&resp);
    Ok(Decoded {
        request: request.to_string(),
        version,
        frame_len,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn decodes_what_it_is_given_and_refuses_the_rest() {
        // ApiVersions v0: correlation id, error 0, no keys.
        let mut wire = 10i32.to_be_bytes().to_vec();
        wire.extend_from_slice(&[0, 0, 0, 7, 0, 0, 0, 0, 0, 0]);
        let d = decode_response(0, 0, &wire, 1 << 20).unwrap();
        assert_eq!((d.version, d.frame_len), (0, 10));
        let e = decode_response(3, 0, &0x7fff_ffffi32.to_be_bytes(), 1 << 20).unwrap_err();
        assert!(matches!(e, Error::FrameSize { .. }), "{e}");
        let e = decode_response(1, 5, &wire, 1 << 20).unwrap_err();
        assert!(matches!(e, Error::Protocol { .. }), "{e}");
        assert!(decode_response(3, 200, &[], 1 << 20).is_err());
    }
}
