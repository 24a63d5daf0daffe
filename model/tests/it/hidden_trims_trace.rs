//! The seed's HiddenTrims trace ("The trim that hid the fence"), replayed action by action.
//!
//! The seed tells it in five steps; in the spec each step is one or more actions, because a write
//! or trim commits only once `Replicate` has copied it to a majority:
//! 1. the lease moves to holder 2 and nobody tells holder 1;
//! 2. holder 2 makes its fenced write at 1 (committed, and read back to learn its tail);
//! 3. holder 2 trims before 2: the trim record lands at 2 and the floor moves to 2;
//! 4. holder 1 reads from 1, below the floor: refused as too old; it resumes at the floor, skips
//!    the trim record, sees no write of epoch 2 and takes the tail as its own;
//! 5. holder 1 writes at 3 and trims at 4, after holder 2.
//!
//! With the tag (the main configuration), step 4 retires holder 1 instead.

use felix_model::check;
use felix_model::head_trim::config::Config;
use felix_model::head_trim::properties;
use felix_model::head_trim::spec::{Action, FelixHeadTrim, State};
use felix_model::spec::Spec;
use felix_names::Invariant;
use stateright::Model;

/// Applies `actions` from the initial state, asserting each is enabled (offered by `actions()`),
/// and returns every state visited, the initial one first.
fn replay(config: &'static Config, actions: &[Action]) -> Vec<State> {
    let model = FelixHeadTrim::new(config);
    let mut states = model.init_states();
    assert_eq!(states.len(), 1);
    for &action in actions {
        let state = states.last().expect("a state").clone();
        let mut offered = Vec::new();
        model.actions(&state, &mut offered);
        assert!(
            offered.contains(&action),
            "{action} is not enabled in {state:?}"
        );
        let next = model
            .next_state(&state, action)
            .expect("an enabled action steps");
        states.push(next);
    }
    states
}

/// Steps 1 to 4 of the seed.
const UP_TO_THE_STALE_READ: [Action; 7] = [
    Action::MoveLease,
    Action::Write(2, 1),
    Action::Replicate(1, 2),
    Action::Read(2, 1),
    Action::TrimAppend(2, 1, 2),
    Action::Replicate(1, 2),
    Action::Read(1, 1),
];

/// Step 5 of the seed.
const STALE_WRITE_AND_TRIM: [Action; 5] = [
    Action::Write(1, 1),
    Action::Replicate(1, 2),
    Action::Read(1, 1),
    Action::TrimAppend(1, 1, 4),
    Action::Replicate(1, 2),
];

fn stale_trim_refused(config: &'static Config, state: &State) -> bool {
    properties::stale_trim_refused(&FelixHeadTrim::new(config), state)
}

#[test]
fn hidden_trims_replays_the_seed_trace_to_a_stale_trim_refused_violation() {
    // Proves the seed's trace is a behaviour of the HiddenTrims twin: every action is enabled, the
    // fenced write and the trim commit on broker 1 (floor 2), holder 1's read below the floor does
    // not retire it and hands it the tail, and once its write commits after holder 2's,
    // StaleTrimRefused is broken (and stays broken after its trim at 4).
    let twin = FelixHeadTrim::lookup("HiddenTrims").expect("registered");
    let mut actions = UP_TO_THE_STALE_READ.to_vec();
    actions.extend(STALE_WRITE_AND_TRIM);
    let states = replay(twin, &actions);
    let after_trim = &states[6];
    assert_eq!(
        after_trim.commit[0], 2,
        "the fenced write and the trim are committed"
    );
    assert_eq!(after_trim.floor(1), 2, "the floor moved to 2");
    let after_stale_read = &states[7];
    assert!(
        !after_stale_read.retired[0],
        "no tag: holder 1 is not retired"
    );
    assert_eq!(after_stale_read.expected[0], 2, "holder 1 took the tail");
    for state in &states[..=8] {
        assert!(
            stale_trim_refused(twin, state),
            "holds before the stale write commits"
        );
    }
    assert_eq!(states[9].commit[0], 3, "holder 1's write committed at 3");
    assert!(!stale_trim_refused(twin, &states[9]));
    let last = states.last().expect("a state");
    assert_eq!(last.log[0].at(4).f, 4, "holder 1's trim landed at 4");
    assert!(!stale_trim_refused(twin, last));
}

#[test]
fn with_the_tag_the_stale_read_retires_holder_1() {
    // Proves the fix: in the main configuration the same read is refused with a tag of epoch 2,
    // holder 1 retires, and it can no longer write.
    let main = FelixHeadTrim::main_config();
    let states = replay(main, &UP_TO_THE_STALE_READ);
    let after_stale_read = &states[7];
    assert!(after_stale_read.retired[0], "the tag retired holder 1");
    assert_eq!(after_stale_read.floor_tag(main, 1), 2);
    let model = FelixHeadTrim::new(main);
    let mut offered = Vec::new();
    model.actions(states.last().expect("a state"), &mut offered);
    assert!(!offered.contains(&Action::Write(1, 1)));
    assert!(states.iter().all(|state| stale_trim_refused(main, state)));
}

#[test]
fn the_shortest_hidden_trims_counterexample_is_no_longer_than_the_seed_trace() {
    // Proves breadth-first search finds a StaleTrimRefused counterexample in HiddenTrims at least
    // as short as the seed's trace up to the committed stale write (9 actions).
    let twin = FelixHeadTrim::lookup("HiddenTrims").expect("registered");
    let trace = check::shortest_counterexample(twin, Invariant::StaleTrimRefused);
    assert!(trace.len() >= 2, "a counterexample exists");
    assert!(trace.len() - 1 <= 9, "{} actions", trace.len() - 1);
}
