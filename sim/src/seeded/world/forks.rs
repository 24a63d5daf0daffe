//! A continuation's fork in the seeded world (`crate::seeded::fork`): where its streams are
//! re-keyed, and how its first line names it.

use super::World;
use crate::render::trace::SimEvent;
use crate::seeded::fork::Fork;

impl World {
    /// A continuation's fork: once the trace holds line `fork.step`, every stream that draws the
    /// future is re-keyed from (seed, step, branch) before the next event is handled, and a line
    /// marks it. The clocks drew everything they draw when the world was built.
    pub(super) fn fork_if_due(&mut self) {
        let Some(fork) = self.fork else {
            return;
        };
        if self.recorder.steps() <= fork.step {
            return;
        }
        self.fork = None;
        let key = fork.key(self.seed);
        self.network.rekey(key);
        self.disk_stream.rekey(key);
        self.storage_stream.rekey(key);
        self.fault_stream.rekey(key);
        self.workload.rekey(key);
        self.buggify.rekey(key);
        for slot in &mut self.nodes {
            slot.timeouts.rekey(key);
        }
        self.sim(SimEvent::Forked {
            step: fork.step,
            branch: fork.branch,
        });
    }
}

/// The `started` line's label of a run: its configuration's label, and a continuation's fork
/// (`fork STEP:BRANCH`) after it.
pub(super) fn label(label: Option<String>, fork: Option<Fork>) -> Option<String> {
    match (label, fork) {
        (label, None) => label,
        (None, Some(fork)) => Some(format!("fork {fork}")),
        (Some(label), Some(fork)) => Some(format!("{label}, fork {fork}")),
    }
}
