//! Framing and request decoding: a frame's header is read with the header version of its API key, then
//! its body by the request's own type. Only the API keys and versions in [`APIS`] are decoded.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiVersionsRequest, CreateTopicsRequest, DeleteTopicsRequest, DescribeClusterRequest,
    DescribeConfigsRequest, DescribeGroupsRequest, FetchRequest, FindCoordinatorRequest,
    HeartbeatRequest, InitProducerIdRequest, JoinGroupRequest, LeaveGroupRequest,
    ListGroupsRequest, ListOffsetsRequest, MetadataRequest, OffsetCommitRequest,
    OffsetFetchRequest, ProduceRequest, RequestHeader, ResponseHeader, SaslAuthenticateRequest,
    SaslHandshakeRequest, SyncGroupRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion};

/// The API key of ApiVersions.
pub const API_VERSIONS_KEY: i16 = 18;
/// The API key of Produce.
pub const PRODUCE_KEY: i16 = 0;
/// The API key of Fetch.
pub const FETCH_KEY: i16 = 1;
/// The lowest Produce version decoded (older ones are advertised only, as librdkafka needs v0 listed
/// to turn compression on).
pub const PRODUCE_MIN_DECODED: i16 = 3;

macro_rules! requests {
    ($($variant:ident($ty:ty) = $key:literal, $min:literal..=$max:literal;)*) => {
        /// A request this listener answers, decoded.
        #[derive(Debug)]
        #[allow(clippy::large_enum_variant)]
        pub enum Request {
            $(
                #[doc = concat!("API key ", stringify!($key), ".")]
                $variant($ty),
            )*
            /// An API key or version this listener does not decode.
            Unsupported,
        }

        /// Every API key answered, with the versions advertised (min, max).
        pub const APIS: &[(i16, i16, i16)] = &[$(($key, $min, $max),)*];

        fn decode_known(key: i16, version: i16, buf: &mut Bytes) -> Result<(RequestHeader, Request), String> {
            match key {
                $(
                    $key => {
                        let header = RequestHeader::decode(buf, <$ty as HeaderVersion>::header_version(version))
                            .map_err(|e| e.to_string())?;
                        let body = <$ty as Decodable>::decode(buf, version).map_err(|e| e.to_string())?;
                        Ok((header, Request::$variant(body)))
                    }
                )*
                _ => Err(format!("API key {key} is not answered")),
            }
        }
    };
}

requests! {
    Produce(ProduceRequest) = 0, 0..=12;
    Fetch(FetchRequest) = 1, 4..=12;
    ListOffsets(ListOffsetsRequest) = 2, 1..=8;
    Metadata(MetadataRequest) = 3, 0..=12;
    OffsetCommit(OffsetCommitRequest) = 8, 2..=9;
    OffsetFetch(OffsetFetchRequest) = 9, 1..=9;
    FindCoordinator(FindCoordinatorRequest) = 10, 0..=6;
    JoinGroup(JoinGroupRequest) = 11, 0..=9;
    Heartbeat(HeartbeatRequest) = 12, 0..=4;
    LeaveGroup(LeaveGroupRequest) = 13, 0..=5;
    SyncGroup(SyncGroupRequest) = 14, 0..=5;
    DescribeGroups(DescribeGroupsRequest) = 15, 0..=6;
    ListGroups(ListGroupsRequest) = 16, 0..=5;
    SaslHandshake(SaslHandshakeRequest) = 17, 1..=1;
    ApiVersions(ApiVersionsRequest) = 18, 0..=4;
    CreateTopics(CreateTopicsRequest) = 19, 2..=7;
    DeleteTopics(DeleteTopicsRequest) = 20, 1..=6;
    InitProducerId(InitProducerIdRequest) = 22, 0..=5;
    DescribeConfigs(DescribeConfigsRequest) = 32, 1..=4;
    SaslAuthenticate(SaslAuthenticateRequest) = 36, 0..=2;
    DescribeCluster(DescribeClusterRequest) = 60, 0..=2;
}

/// The versions decoded for an API key, `None` when the key is not answered.
pub fn decoded_versions(key: i16) -> Option<(i16, i16)> {
    APIS.iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, min, max)| {
            if key == PRODUCE_KEY {
                (PRODUCE_MIN_DECODED, *max)
            } else {
                (*min, *max)
            }
        })
}

/// One request frame (without its length prefix), decoded.
#[derive(Debug)]
pub struct Frame {
    /// The API key.
    pub api_key: i16,
    /// The request's version.
    pub version: i16,
    /// The correlation id to answer with.
    pub correlation_id: i32,
    /// The client id, when given.
    pub client_id: Option<String>,
    /// The request ([`Request::Unsupported`] for an API key or version not decoded).
    pub request: Request,
    /// The error codes of the answer, noted as it is encoded (for the listener's metrics).
    pub error_codes: std::sync::Mutex<Vec<i16>>,
}

/// Decodes one request frame (the bytes after the 4-byte length). An API key or version this listener
/// does not decode gives [`Request::Unsupported`] with the correlation id read from the header.
///
/// # Errors
/// The frame is shorter than a request header, or its header or body does not decode.
pub fn decode_frame(frame: Bytes) -> Result<Frame, String> {
    if frame.len() < 8 {
        return Err(format!(
            "a request frame of {} bytes is shorter than a request header",
            frame.len()
        ));
    }
    let mut peek = &frame[..8];
    let api_key = peek.get_i16();
    let version = peek.get_i16();
    let correlation_id = peek.get_i32();
    let unsupported = Frame {
        api_key,
        version,
        correlation_id,
        client_id: None,
        request: Request::Unsupported,
        error_codes: Default::default(),
    };
    match decoded_versions(api_key) {
        Some((min, max)) if (min..=max).contains(&version) => {}
        _ => return Ok(unsupported),
    }
    let mut buf = frame;
    let (header, request) = decode_known(api_key, version, &mut buf)?;
    Ok(Frame {
        api_key,
        version,
        correlation_id: header.correlation_id,
        client_id: header.client_id.map(|c| c.to_string()),
        request,
        error_codes: Default::default(),
    })
}

/// Decodes a frame as [`decode_frame`] does and, for a Produce request, every partition's record batches
/// as the listener would (the fuzz target's entry). Returns how many records decoded.
///
/// # Errors
/// The frame or a record batch does not decode.
pub fn decode_frame_and_records(frame: &[u8]) -> Result<usize, String> {
    let decoded = decode_frame(Bytes::copy_from_slice(frame))?;
    let Request::Produce(produce) = decoded.request else {
        return Ok(0);
    };
    let mut count = 0;
    for topic in produce.topic_data {
        for mut records in topic.partition_data.into_iter().filter_map(|p| p.records) {
            let sets = kafka_protocol::records::RecordBatchDecoder::decode_all(&mut records)
                .map_err(|e| e.to_string())?;
            count += sets.iter().map(|s| s.records.len()).sum::<usize>();
        }
    }
    Ok(count)
}

/// Encodes a response with its header, prefixed with the frame length.
///
/// # Errors
/// The response does not encode at this version (a field this version cannot carry is set).
pub fn encode_response<R: Encodable + HeaderVersion>(
    correlation_id: i32,
    version: i16,
    response: &R,
) -> Result<Bytes, String> {
    let header = ResponseHeader::default().with_correlation_id(correlation_id);
    let header_version = R::header_version(version);
    let mut buf = BytesMut::with_capacity(64);
    buf.put_i32(0);
    header
        .encode(&mut buf, header_version)
        .map_err(|e| e.to_string())?;
    response
        .encode(&mut buf, version)
        .map_err(|e| e.to_string())?;
    let len = i32::try_from(buf.len() - 4).map_err(|_| "the response is too large".to_string())?;
    buf[..4].copy_from_slice(&len.to_be_bytes());
    Ok(buf.freeze())
}

/// Hand-built request frames (this build decodes requests but does not encode them), for tests and the
/// fuzz target's seeds.
pub mod samples {
    use bytes::{BufMut, Bytes, BytesMut};

    fn header(buf: &mut BytesMut, key: i16, version: i16, flexible: bool) {
        buf.put_i16(key);
        buf.put_i16(version);
        buf.put_i32(7);
        buf.put_i16(1);
        buf.put_slice(b"c");
        if flexible {
            buf.put_u8(0);
        }
    }

    /// ApiVersions at `version` (0 to 4), without the length prefix.
    pub fn api_versions(version: i16) -> Bytes {
        let mut buf = BytesMut::new();
        header(&mut buf, 18, version, version >= 3);
        if version >= 3 {
            // client_software_name "c", client_software_version "1", no tagged fields.
            buf.put_slice(&[2, b'c', 2, b'1', 0]);
        }
        buf.freeze()
    }

    /// Metadata v4 asking for `topic`.
    pub fn metadata(topic: &str) -> Bytes {
        let mut buf = BytesMut::new();
        header(&mut buf, 3, 4, false);
        buf.put_i32(1);
        buf.put_i16(topic.len() as i16);
        buf.put_slice(topic.as_bytes());
        buf.put_u8(1);
        buf.freeze()
    }

    /// Produce v3 of `records` (a record batch) to partition 0 of `topic`.
    pub fn produce(topic: &str, records: &[u8]) -> Bytes {
        let mut buf = BytesMut::new();
        header(&mut buf, 0, 3, false);
        buf.put_i16(-1);
        buf.put_i16(-1);
        buf.put_i32(1000);
        buf.put_i32(1);
        buf.put_i16(topic.len() as i16);
        buf.put_slice(topic.as_bytes());
        buf.put_i32(1);
        buf.put_i32(0);
        buf.put_i32(records.len() as i32);
        buf.put_slice(records);
        buf.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::records::{
        Compression, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
    };

    /// A small deterministic generator (xorshift), so the test needs no crate and repeats exactly.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn batch(compression: Compression) -> Bytes {
        let record = |offset| {
            crate::kafka::fetch::to_record(crate::storage::LogRecord {
                topic: "t".into(),
                partition: 0,
                offset,
                timestamp: Some(1_000),
                key: Some(b"k".to_vec()),
                value: Some(b"hello hello hello".to_vec()),
                headers: Vec::new(),
            })
        };
        let mut buf = BytesMut::new();
        let options = RecordEncodeOptions {
            version: 2,
            compression,
        };
        RecordBatchEncoder::encode(&mut buf, [record(0), record(1)].iter(), &options).unwrap();
        buf.freeze()
    }

    #[test]
    fn decodes_a_request_and_reports_unsupported_versions() {
        for v in 0..=4 {
            let f = decode_frame(samples::api_versions(v)).unwrap();
            assert_eq!((f.api_key, f.version, f.correlation_id), (18, v, 7));
            assert_eq!(f.client_id.as_deref(), Some("c"));
            assert!(matches!(f.request, Request::ApiVersions(_)), "v{v}");
        }
        let mut unknown = samples::api_versions(3).to_vec();
        unknown[2..4].copy_from_slice(&99i16.to_be_bytes());
        let f = decode_frame(Bytes::from(unknown)).unwrap();
        assert!(matches!(f.request, Request::Unsupported));
        assert_eq!(f.correlation_id, 7);
        match decode_frame(samples::metadata("t")).unwrap().request {
            Request::Metadata(m) => {
                assert_eq!(m.topics.unwrap()[0].name.as_ref().unwrap().as_str(), "t")
            }
            other => panic!("{other:?}"),
        }
        match decode_frame(samples::produce("t", &batch(Compression::Gzip)))
            .unwrap()
            .request
        {
            Request::Produce(p) => {
                let mut records = p.topic_data[0].partition_data[0].records.clone().unwrap();
                let sets = RecordBatchDecoder::decode_all(&mut records).unwrap();
                assert_eq!(sets[0].records.len(), 2);
            }
            other => panic!("{other:?}"),
        }
        assert!(decode_frame(Bytes::from_static(&[0, 1, 2])).is_err());
    }

    #[test]
    fn random_truncated_and_mutated_frames_fail_without_panicking() {
        let valid: Vec<Bytes> = vec![
            samples::api_versions(3),
            samples::api_versions(1),
            samples::metadata("topic"),
            samples::produce("t", &batch(Compression::None)),
            samples::produce("t", &batch(Compression::Snappy)),
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut decoded = 0;
        for round in 0..20_000u32 {
            let base = &valid[round as usize % valid.len()];
            let mut bytes = base.to_vec();
            match round % 4 {
                0 => bytes.truncate(rng.next() as usize % (bytes.len() + 1)),
                1 => {
                    // The header: API key, version, correlation id.
                    for _ in 0..1 + rng.next() % 3 {
                        let i = rng.next() as usize % 8;
                        bytes[i] = rng.next() as u8;
                    }
                }
                2 => {
                    // Any four bytes, element counts and lengths among them, made huge: the decoder
                    // must not reserve memory for a declared count (the vendored crate's patch).
                    let i = rng.next() as usize % bytes.len().saturating_sub(3).max(1);
                    let huge = [0x7f, 0xff, 0xff, 0xf0 | (rng.next() as u8 & 0x0f)];
                    for (b, h) in bytes.iter_mut().skip(i).zip(huge) {
                        *b = h;
                    }
                }
                _ => bytes.extend((0..rng.next() % 16).map(|_| rng.next() as u8)),
            }
            if decode_frame_and_records(&bytes).is_ok_and(|n| n > 0) {
                decoded += 1;
            }
        }
        // Appending bytes leaves a valid produce request that still decodes: the loop did decode some.
        assert!(decoded > 0);
    }
}
