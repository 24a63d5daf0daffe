//! The lease service: grants leases with strictly increasing epochs.
//!
//! It judges expiry on its own clock (true simulated time) and may move a lease without telling
//! the old holder: the old holder may be paused, partitioned, or its clock slow, and keeps
//! believing it holds the lease. Safety must not depend on that belief; the tail fence is what
//! stops a stale holder.

use crate::env::queue::Time;
use felix_core::api::ClientId;
use serde::{Deserialize, Serialize};

/// A lease grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub holder: ClientId,
    pub epoch: u64,
    /// True time at which the service considers this lease expired unless renewed.
    pub expires_at: Time,
}

pub struct LeaseService {
    duration_micros: Time,
    epoch_last: u64,
    current: Option<Grant>,
}

impl LeaseService {
    pub fn new(duration_micros: Time) -> LeaseService {
        assert!(duration_micros > 0);
        LeaseService {
            duration_micros,
            epoch_last: 0,
            current: None,
        }
    }

    pub fn current(&self) -> Option<Grant> {
        self.current
    }

    /// Grants a new lease to `holder`, with an epoch above every earlier one.
    pub fn grant(&mut self, holder: ClientId, now: Time) -> Grant {
        let epoch = self.epoch_last + 1;
        assert!(epoch > self.epoch_last);
        self.epoch_last = epoch;
        let grant = Grant {
            holder,
            epoch,
            expires_at: now + self.duration_micros,
        };
        self.current = Some(grant);
        grant
    }

    /// Extends the current lease if `holder` still holds `epoch`; false otherwise.
    pub fn renew(&mut self, holder: ClientId, epoch: u64, now: Time) -> bool {
        match &mut self.current {
            Some(grant)
                if grant.holder == holder && grant.epoch == epoch && now < grant.expires_at =>
            {
                grant.expires_at = now + self.duration_micros;
                true
            }
            _ => false,
        }
    }

    /// Whether the current lease has lapsed on the service's clock.
    pub fn expired(&self, now: Time) -> bool {
        self.current.is_none_or(|grant| now >= grant.expires_at)
    }

    pub fn duration_micros(&self) -> Time {
        self.duration_micros
    }
}
