//! The error codes an answer carries, for `liteconnect_kafka_errors_total`: the top-level code and those of
//! each topic, partition or group where the answer has one per item.

use kafka_protocol::messages::*;

/// The error codes of one answer (zeros included; the counter skips them).
pub trait ErrorCodes {
    /// Appends every error code of the answer to `out`.
    fn error_codes(&self, out: &mut Vec<i16>);
}

/// Answers with one top-level code.
macro_rules! top_level {
    ($($ty:ty),* $(,)?) => {
        $(impl ErrorCodes for $ty {
            fn error_codes(&self, out: &mut Vec<i16>) {
                out.push(self.error_code);
            }
        })*
    };
}

top_level!(
    JoinGroupResponse,
    SyncGroupResponse,
    HeartbeatResponse,
    ListGroupsResponse,
    SaslHandshakeResponse,
    SaslAuthenticateResponse,
    ApiVersionsResponse,
    InitProducerIdResponse,
    DescribeClusterResponse,
);

impl ErrorCodes for ProduceResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        let partitions = self.responses.iter().flat_map(|t| &t.partition_responses);
        out.extend(partitions.map(|p| p.error_code));
    }
}

impl ErrorCodes for FetchResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.push(self.error_code);
        let partitions = self.responses.iter().flat_map(|t| &t.partitions);
        out.extend(partitions.map(|p| p.error_code));
    }
}

impl ErrorCodes for ListOffsetsResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        let partitions = self.topics.iter().flat_map(|t| &t.partitions);
        out.extend(partitions.map(|p| p.error_code));
    }
}

impl ErrorCodes for MetadataResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        for t in &self.topics {
            out.push(t.error_code);
            out.extend(t.partitions.iter().map(|p| p.error_code));
        }
    }
}

impl ErrorCodes for OffsetCommitResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        let partitions = self.topics.iter().flat_map(|t| &t.partitions);
        out.extend(partitions.map(|p| p.error_code));
    }
}

impl ErrorCodes for OffsetFetchResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.push(self.error_code);
        let partitions = self.topics.iter().flat_map(|t| &t.partitions);
        out.extend(partitions.map(|p| p.error_code));
        for g in &self.groups {
            out.push(g.error_code);
            let partitions = g.topics.iter().flat_map(|t| &t.partitions);
            out.extend(partitions.map(|p| p.error_code));
        }
    }
}

impl ErrorCodes for FindCoordinatorResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.push(self.error_code);
        out.extend(self.coordinators.iter().map(|c| c.error_code));
    }
}

impl ErrorCodes for LeaveGroupResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.push(self.error_code);
        out.extend(self.members.iter().map(|m| m.error_code));
    }
}

impl ErrorCodes for DescribeGroupsResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.extend(self.groups.iter().map(|g| g.error_code));
    }
}

impl ErrorCodes for CreateTopicsResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.extend(self.topics.iter().map(|t| t.error_code));
    }
}

impl ErrorCodes for DeleteTopicsResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.extend(self.responses.iter().map(|t| t.error_code));
    }
}

impl ErrorCodes for DescribeConfigsResponse {
    fn error_codes(&self, out: &mut Vec<i16>) {
        out.extend(self.results.iter().map(|r| r.error_code));
    }
}
