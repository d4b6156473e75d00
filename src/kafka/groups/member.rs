//! The membership of one classic consumer group: its state machine (Empty, PreparingRebalance,
//! CompletingRebalance, Stable), its members and the joins and syncs waiting for a rebalance to end.
//! Everything here is synchronous and runs under the coordinator's lock; waiting happens outside it, on the
//! oneshot channels the members hold.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// A group's state, named as Kafka names them in ListGroups and DescribeGroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupState {
    /// No members (committed offsets may exist).
    Empty,
    /// A rebalance has started: members are rejoining.
    PreparingRebalance,
    /// Every member has joined; the leader's assignment is awaited.
    CompletingRebalance,
    /// Every member has its assignment.
    Stable,
    /// The group no longer exists.
    Dead,
}

impl GroupState {
    /// The name Kafka gives the state.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }
}

/// What a completed join hands each member.
#[derive(Clone, Debug)]
pub struct JoinResult {
    /// The error, if the join failed.
    pub error: Option<ResponseError>,
    /// The generation the join completed (-1 on error).
    pub generation: i32,
    /// The group's protocol type (`consumer`).
    pub protocol_type: Option<String>,
    /// The protocol (assignor) chosen.
    pub protocol: Option<String>,
    /// The leader's member id.
    pub leader: String,
    /// The member's id (generated for a new member).
    pub member_id: String,
    /// (member id, group instance id, metadata): only for the leader.
    pub members: Vec<(String, Option<String>, Bytes)>,
}

/// What a completed sync hands a member: an error or its assignment.
pub type SyncResult = Result<Bytes, ResponseError>;

/// One member of a group.
#[derive(Debug)]
pub struct Member {
    /// The member id.
    pub id: String,
    /// The group instance id of a static member.
    pub instance_id: Option<String>,
    /// The client id, as DescribeGroups shows it.
    pub client_id: String,
    /// The client's address.
    pub client_host: String,
    /// Silent for longer, the member is removed.
    pub session_timeout: Duration,
    /// How long a rebalance waits for it to rejoin.
    pub rebalance_timeout: Duration,
    /// The protocols it supports, in its order of preference, with their metadata.
    pub protocols: Vec<(String, Bytes)>,
    /// Its assignment in the current generation (from the leader's SyncGroup).
    pub assignment: Bytes,
    /// When it was last heard from.
    pub last_seen: Instant,
    /// Joined in the current rebalance and waiting for it to complete.
    pub join_waiter: Option<oneshot::Sender<JoinResult>>,
    /// Waiting for the leader's assignment.
    pub sync_waiter: Option<oneshot::Sender<SyncResult>>,
    /// The order in which members first joined (the first one still present leads).
    seq: u64,
}

impl Member {
    fn metadata(&self, protocol: &str) -> Bytes {
        self.protocols
            .iter()
            .find(|(name, _)| name == protocol)
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }

    /// When its session ends: never while it waits for a join or a sync, as in Kafka.
    fn session_deadline(&self) -> Option<Instant> {
        if self.join_waiter.is_some() || self.sync_waiter.is_some() {
            None
        } else {
            Some(self.last_seen + self.session_timeout)
        }
    }
}

/// What a join asks for.
#[derive(Debug)]
pub struct JoinRequest {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub session_timeout: Duration,
    pub rebalance_timeout: Duration,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    /// KIP-394: a member without an id gets one and must join again with it (JoinGroup v4+).
    pub require_known_member_id: bool,
}

/// What a join gets right away: an answer, or a receiver for the answer when the rebalance completes.
pub enum JoinOutcome {
    Now(JoinResult),
    Wait(oneshot::Receiver<JoinResult>),
}

/// One classic group.
#[derive(Debug)]
pub struct Group {
    pub id: String,
    pub state: GroupState,
    pub generation: i32,
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    pub members: BTreeMap<String, Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, until they join (or their session time passes).
    pending: HashMap<String, Instant>,
    /// When the current rebalance phase gives up on the members that have not joined (or synced).
    phase_deadline: Option<Instant>,
    next_seq: u64,
}

fn join_error(error: ResponseError, member_id: &str) -> JoinResult {
    JoinResult {
        error: Some(error),
        generation: -1,
        protocol_type: None,
        protocol: None,
        leader: String::new(),
        member_id: member_id.to_string(),
        members: Vec::new(),
    }
}

impl Group {
    pub fn new(id: &str) -> Group {
        Group {
            id: id.to_string(),
            state: GroupState::Empty,
            generation: 0,
            protocol_type: None,
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            pending: HashMap::new(),
            phase_deadline: None,
            next_seq: 0,
        }
    }

    /// True when nothing keeps the group in memory (its offsets, if any, stay in the store).
    pub fn is_idle(&self) -> bool {
        self.members.is_empty() && self.pending.is_empty()
    }

    /// `<client.id>-<uuid>`, as Kafka names members (`consumer-<uuid>` without a client id).
    fn new_member_id(client_id: &str) -> String {
        let prefix = if client_id.is_empty() {
            "consumer"
        } else {
            client_id
        };
        format!("{prefix}-{}", uuid::Uuid::new_v4())
    }

    fn supports(&self, request: &JoinRequest) -> bool {
        if self.members.is_empty() {
            return true;
        }
        self.protocol_type.as_deref() == Some(request.protocol_type.as_str())
            && request.protocols.iter().any(|(name, _)| {
                self.members
                    .values()
                    .filter(|m| m.id != request.member_id)
                    .all(|m| m.protocols.iter().any(|(n, _)| n == name))
            })
    }

    /// JoinGroup.
    pub fn join(&mut self, request: JoinRequest, now: Instant) -> JoinOutcome {
        if request.protocol_type.is_empty()
            || request.protocols.is_empty()
            || !self.supports(&request)
        {
            return JoinOutcome::Now(join_error(
                ResponseError::InconsistentGroupProtocol,
                &request.member_id,
            ));
        }
        let mut request = request;
        if request.member_id.is_empty() {
            // A static member that comes back replaces its former incarnation.
            let former = request.instance_id.as_ref().and_then(|instance| {
                self.members
                    .values()
                    .find(|m| m.instance_id.as_ref() == Some(instance))
                    .map(|m| m.id.clone())
            });
            if let Some(former) = former {
                self.remove_member(&former);
            }
            let id = Group::new_member_id(&request.client_id);
            if request.require_known_member_id && request.instance_id.is_none() {
                self.pending
                    .insert(id.clone(), now + request.session_timeout);
                return JoinOutcome::Now(join_error(ResponseError::MemberIdRequired, &id));
            }
            request.member_id = id;
        } else if !self.members.contains_key(&request.member_id)
            && self.pending.remove(&request.member_id).is_none()
        {
            return JoinOutcome::Now(join_error(
                ResponseError::UnknownMemberId,
                &request.member_id,
            ));
        } else if let Some(m) = self.members.get(&request.member_id) {
            if request.instance_id.is_some() && m.instance_id != request.instance_id {
                return JoinOutcome::Now(join_error(
                    ResponseError::FencedInstanceId,
                    &request.member_id,
                ));
            }
        }
        let (tx, rx) = oneshot::channel();
        let unchanged_follower = self.state == GroupState::Stable
            && self.leader.as_deref() != Some(request.member_id.as_str())
            && self
                .members
                .get(&request.member_id)
                .is_some_and(|m| m.protocols == request.protocols);
        let id = request.member_id.clone();
        self.upsert_member(request, now, tx);
        if unchanged_follower {
            // As in Kafka: a follower rejoining a stable group with the same metadata gets the current generation.
            let leader = self.leader.clone().unwrap_or_default();
            let result = self.result_for(&id, &leader, false);
            if let Some(w) = self.members.get_mut(&id).and_then(|m| m.join_waiter.take()) {
                let _ = w.send(result);
            }
            return JoinOutcome::Wait(rx);
        }
        if self.state != GroupState::PreparingRebalance {
            self.prepare_rebalance(now);
        }
        self.maybe_complete_join();
        JoinOutcome::Wait(rx)
    }

    fn upsert_member(&mut self, r: JoinRequest, now: Instant, waiter: oneshot::Sender<JoinResult>) {
        if self.members.is_empty() {
            self.protocol_type = Some(r.protocol_type.clone());
        }
        let seq = self.next_seq;
        let member = self
            .members
            .entry(r.member_id.clone())
            .or_insert_with(|| Member {
                id: r.member_id.clone(),
                instance_id: r.instance_id.clone(),
                client_id: String::new(),
                client_host: String::new(),
                session_timeout: r.session_timeout,
                rebalance_timeout: r.rebalance_timeout,
                protocols: Vec::new(),
                assignment: Bytes::new(),
                last_seen: now,
                join_waiter: None,
                sync_waiter: None,
                seq,
            });
        if member.seq == seq {
            self.next_seq += 1;
        }
        member.client_id = r.client_id;
        member.client_host = r.client_host;
        member.session_timeout = r.session_timeout;
        member.rebalance_timeout = r.rebalance_timeout;
        member.protocols = r.protocols;
        member.last_seen = now;
        member.join_waiter = Some(waiter);
    }

    /// Starts a rebalance: syncs still waiting are told to rejoin.
    fn prepare_rebalance(&mut self, now: Instant) {
        for m in self.members.values_mut() {
            if let Some(w) = m.sync_waiter.take() {
                let _ = w.send(Err(ResponseError::RebalanceInProgress));
            }
        }
        let timeout = self
            .members
            .values()
            .map(|m| m.rebalance_timeout)
            .max()
            .unwrap_or_default();
        self.state = GroupState::PreparingRebalance;
        self.phase_deadline = Some(now + timeout);
    }

    fn maybe_complete_join(&mut self) {
        if self.state == GroupState::PreparingRebalance
            && self.pending.is_empty()
            && self.members.values().all(|m| m.join_waiter.is_some())
        {
            self.complete_join();
        }
    }

    /// The protocol every member supports that most members prefer.
    fn select_protocol(&self) -> Option<String> {
        let first = self.members.values().next()?;
        let candidates: Vec<&String> = first
            .protocols
            .iter()
            .map(|(n, _)| n)
            .filter(|n| {
                self.members
                    .values()
                    .all(|m| m.protocols.iter().any(|(p, _)| p == *n))
            })
            .collect();
        let mut votes: Vec<(usize, &String)> = candidates.iter().map(|c| (0, *c)).collect();
        for m in self.members.values() {
            if let Some((_, vote)) = m.protocols.iter().find(|(p, _)| candidates.contains(&p)) {
                if let Some(entry) = votes.iter_mut().find(|(_, c)| *c == vote) {
                    entry.0 += 1;
                }
            }
        }
        // The most votes wins; ties go to the first member's preference.
        let best = votes.iter().map(|(n, _)| *n).max()?;
        votes
            .into_iter()
            .find(|(n, _)| *n == best)
            .map(|(_, c)| c.clone())
    }

    fn result_for(&self, member_id: &str, leader: &str, with_members: bool) -> JoinResult {
        let protocol = self.protocol.clone().unwrap_or_default();
        JoinResult {
            error: None,
            generation: self.generation,
            protocol_type: self.protocol_type.clone(),
            protocol: self.protocol.clone(),
            leader: leader.to_string(),
            member_id: member_id.to_string(),
            members: if with_members {
                let mut members: Vec<&Member> = self.members.values().collect();
                members.sort_by_key(|m| m.seq);
                members
                    .into_iter()
                    .map(|m| (m.id.clone(), m.instance_id.clone(), m.metadata(&protocol)))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The ids of the members for which `which` holds.
    fn member_ids(&self, which: impl Fn(&Member) -> bool) -> Vec<String> {
        self.members
            .values()
            .filter(|m| which(m))
            .map(|m| m.id.clone())
            .collect()
    }

    /// Ends the join phase: members that did not rejoin are dropped, the generation moves on and every
    /// waiting join gets its answer (the leader with every member's metadata).
    fn complete_join(&mut self) {
        for id in self.member_ids(|m| m.join_waiter.is_none()) {
            self.members.remove(&id);
        }
        self.pending.clear();
        self.generation += 1;
        self.phase_deadline = None;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.protocol = None;
            self.leader = None;
            return;
        }
        self.protocol = self.select_protocol();
        if !self
            .leader
            .as_ref()
            .is_some_and(|l| self.members.contains_key(l))
        {
            self.leader = self
                .members
                .values()
                .min_by_key(|m| m.seq)
                .map(|m| m.id.clone());
        }
        let leader = self.leader.clone().unwrap_or_default();
        self.state = GroupState::CompletingRebalance;
        self.phase_deadline = self
            .members
            .values()
            .map(|m| m.rebalance_timeout)
            .max()
            .map(|t| Instant::now() + t);
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for id in ids {
            let result = self.result_for(&id, &leader, id == leader);
            let member = self.members.get_mut(&id).expect("member");
            member.assignment = Bytes::new();
            member.last_seen = Instant::now();
            if let Some(w) = member.join_waiter.take() {
                let _ = w.send(result);
            }
        }
    }

    /// Checks a member and generation as Heartbeat, SyncGroup and OffsetCommit do.
    pub fn check_member(
        &self,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
    ) -> Result<(), ResponseError> {
        let Some(member) = self.members.get(member_id) else {
            if instance_id.is_some_and(|i| {
                self.members
                    .values()
                    .any(|m| m.instance_id.as_deref() == Some(i))
            }) {
                return Err(ResponseError::FencedInstanceId);
            }
            return Err(ResponseError::UnknownMemberId);
        };
        if instance_id.is_some() && member.instance_id.as_deref() != instance_id {
            return Err(ResponseError::FencedInstanceId);
        }
        if generation != self.generation {
            return Err(ResponseError::IllegalGeneration);
        }
        Ok(())
    }

    /// SyncGroup: the leader's assignments reach every member; the others wait for them.
    pub fn sync(
        &mut self,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        assignments: Vec<(String, Bytes)>,
        now: Instant,
    ) -> Result<oneshot::Receiver<SyncResult>, ResponseError> {
        self.check_member(member_id, instance_id, generation)?;
        let (tx, rx) = oneshot::channel();
        let member = self.members.get_mut(member_id).expect("checked");
        member.last_seen = now;
        match self.state {
            GroupState::PreparingRebalance => return Err(ResponseError::RebalanceInProgress),
            GroupState::Stable => {
                let _ = tx.send(Ok(member.assignment.clone()));
            }
            GroupState::CompletingRebalance => {
                member.sync_waiter = Some(tx);
                if self.leader.as_deref() == Some(member_id) {
                    let assignments: HashMap<String, Bytes> = assignments.into_iter().collect();
                    for m in self.members.values_mut() {
                        m.assignment = assignments.get(&m.id).cloned().unwrap_or_default();
                        m.last_seen = now;
                        if let Some(w) = m.sync_waiter.take() {
                            let _ = w.send(Ok(m.assignment.clone()));
                        }
                    }
                    self.state = GroupState::Stable;
                    self.phase_deadline = None;
                }
            }
            GroupState::Empty | GroupState::Dead => return Err(ResponseError::UnknownMemberId),
        }
        Ok(rx)
    }

    /// Heartbeat.
    pub fn heartbeat(
        &mut self,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        now: Instant,
    ) -> Result<(), ResponseError> {
        if self.state == GroupState::Empty {
            return Err(ResponseError::UnknownMemberId);
        }
        if let Some(m) = self.members.get_mut(member_id) {
            m.last_seen = now;
        }
        self.check_member(member_id, instance_id, generation)?;
        match self.state {
            GroupState::PreparingRebalance => Err(ResponseError::RebalanceInProgress),
            _ => Ok(()),
        }
    }

    /// Notes that a member is alive (a commit counts as a heartbeat).
    pub fn touch(&mut self, member_id: &str, now: Instant) {
        if let Some(m) = self.members.get_mut(member_id) {
            m.last_seen = now;
        }
    }

    /// LeaveGroup for one member (by member id, or by group instance id for a static member).
    pub fn leave(
        &mut self,
        member_id: &str,
        instance_id: Option<&str>,
        now: Instant,
    ) -> Result<(), ResponseError> {
        let id = match instance_id {
            Some(instance) => {
                let Some(m) = self
                    .members
                    .values()
                    .find(|m| m.instance_id.as_deref() == Some(instance))
                else {
                    return Err(ResponseError::UnknownMemberId);
                };
                if !member_id.is_empty() && m.id != member_id {
                    return Err(ResponseError::FencedInstanceId);
                }
                m.id.clone()
            }
            None if self.members.contains_key(member_id) => member_id.to_string(),
            None => return Err(ResponseError::UnknownMemberId),
        };
        self.remove_member(&id);
        self.after_removal(now);
        Ok(())
    }

    fn remove_member(&mut self, id: &str) {
        if let Some(m) = self.members.remove(id) {
            if let Some(w) = m.join_waiter {
                let _ = w.send(join_error(ResponseError::UnknownMemberId, id));
            }
            if let Some(w) = m.sync_waiter {
                let _ = w.send(Err(ResponseError::UnknownMemberId));
            }
        }
    }

    /// After members left or expired: the group rebalances (or completes the rebalance under way).
    fn after_removal(&mut self, now: Instant) {
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => self.prepare_rebalance(now),
            _ => {}
        }
        if self.members.is_empty() && self.state != GroupState::Empty {
            self.complete_join();
        } else {
            self.maybe_complete_join();
        }
    }

    /// The next instant at which [`Group::expire`] has something to do.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.members
            .values()
            .filter_map(Member::session_deadline)
            .chain(self.pending.values().copied())
            .chain(self.phase_deadline)
            .min()
    }

    /// Removes members whose session ended and ends a rebalance phase whose time is up.
    pub fn expire(&mut self, now: Instant) {
        self.pending.retain(|_, deadline| *deadline > now);
        if self.phase_deadline.is_some_and(|d| d <= now) {
            if self.state == GroupState::PreparingRebalance {
                // The rebalance timeout: those that did not rejoin are dropped.
                self.pending.clear();
                self.complete_join();
            } else if self.state == GroupState::CompletingRebalance {
                // The leader never sent its assignment: those that did not sync are dropped.
                for id in self.member_ids(|m| m.sync_waiter.is_none()) {
                    self.remove_member(&id);
                }
                self.prepare_rebalance(now);
            }
        }
        let expired = self.member_ids(|m| m.session_deadline().is_some_and(|d| d <= now));
        for id in &expired {
            tracing::info!(group = %self.id, member = %id, "A consumer group member's session timed out; the group rebalances.");
            self.remove_member(id);
        }
        if !expired.is_empty() {
            self.after_removal(now);
        }
        self.maybe_complete_join();
    }
}
