//! The unit tests of `felix_sim::seeded::fork` (sim/src/seeded/fork.rs).

use felix_sim::seeded::fork::*;

/// `STEP:BRANCH` parses and prints back; anything else is refused with the shape it wants.
#[test]
fn forks_parse_and_print() {
    let fork = Fork::parse("1200:3");
    assert_eq!(
        fork,
        Ok(Fork {
            step: 1200,
            branch: 3
        })
    );
    assert_eq!(fork.map(|fork| fork.to_string()), Ok("1200:3".to_string()));
    for bad in [
        "",
        "12",
        "12:",
        ":3",
        "a:1",
        "1:b",
        "1:2:3",
        "-1:2",
        "1:2000000",
    ] {
        let error = Fork::parse(bad).expect_err(bad);
        assert!(
            error.contains("fork") || error.contains("branch"),
            "{error}"
        );
    }
}

/// Keys differ across seeds, steps and branches.
#[test]
fn keys_name_the_continuation() {
    let fork = |step, branch| Fork { step, branch };
    let key = fork(10, 0).key(7);
    assert_eq!(key, fork(10, 0).key(7));
    assert_ne!(key, fork(10, 1).key(7));
    assert_ne!(key, fork(11, 0).key(7));
    assert_ne!(key, fork(10, 0).key(8));
}
