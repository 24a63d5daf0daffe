//! FelixHeadTrim's broker symmetry: the search visits one state per orbit under permutations of
//! the brokers (`felix check --symmetry`), a reduction the spec's configurations do not make.

use super::config::Config;
use super::spec::{FelixHeadTrim, State, BROKERS_MAX};

impl FelixHeadTrim {
    /// The model of a configuration, searched up to permutations of the brokers.
    ///
    /// Sound for every property here: no variable names a broker (records carry holder epochs
    /// and terms), every action ranges uniformly over the brokers, and every property quantifies
    /// over all of them; only `Init` singles broker 1 out. So a permutation of the brokers maps
    /// each step to a step and each property's truth to itself, the search visits exactly one
    /// representative of each orbit of reachable states, and a property holds (or is reached)
    /// in some reachable state exactly when it does in some representative. This is the
    /// reduction TLC's SYMMETRY would make; the spec's configurations do not use it, so counts
    /// under it differ from TLC's.
    pub fn with_broker_symmetry(config: &'static Config) -> Self {
        FelixHeadTrim {
            broker_symmetry: true,
            ..FelixHeadTrim::new(config)
        }
    }

    /// The representative of a state's orbit under broker permutations: the brokers sorted by
    /// their variables (term, leader, commit, start, log). The identity without symmetry.
    pub fn canonical(&self, state: State) -> State {
        if !self.broker_symmetry {
            return state;
        }
        let brokers = usize::from(self.config.bounds.brokers);
        let key = |b: usize| {
            (
                state.term[b],
                state.leader[b],
                state.commit[b],
                state.floor[b],
                state.start[b],
                state.log[b].packed(),
            )
        };
        let mut order: [usize; BROKERS_MAX] = std::array::from_fn(|b| b);
        order[..brokers].sort_by_key(|&b| key(b));
        if order.iter().enumerate().all(|(position, &b)| position == b) {
            return state;
        }
        let mut sorted = state.clone();
        for (position, &b) in order[..brokers].iter().enumerate() {
            sorted.term[position] = state.term[b];
            sorted.leader[position] = state.leader[b];
            sorted.commit[position] = state.commit[b];
            sorted.floor[position] = state.floor[b];
            sorted.start[position] = state.start[b];
            sorted.log[position] = state.log[b];
        }
        sorted
    }
}
