//! The pinned distinct-state counts, read from the one table that holds them:
//! `docs/formal/README.md`'s rows `| `Name` | base | pass | N | ... |`. `scripts/check_tla.sh`
//! holds TLC to the same rows, and the model's tests hold Stateright to them, so a count changes
//! in one place and both checkers must follow.

/// The table, as built into this crate.
const TABLE: &str = include_str!("../../docs/formal/README.md");

/// The distinct-state count pinned for the passing configuration `name` (its `.cfg` name, such as
/// `FelixHeadTrimFailover` or `ParosTrimJump`), if the table pins one.
pub fn distinct_states(name: &str) -> Option<usize> {
    let key = format!("`{name}`");
    TABLE.lines().find_map(|line| {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // ["", name, base, expected, count, ...]
        match cells.as_slice() {
            ["", first, _, "pass", count, ..] if *first == key => count.parse().ok(),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every passing configuration of both specs has one count; twins and unknown names have none.
    #[test]
    fn the_table_pins_each_passing_configuration() {
        assert_eq!(distinct_states("FelixHeadTrim"), Some(1_533_492));
        assert_eq!(distinct_states("ParosTrimJumpReplica"), Some(23_307));
        assert_eq!(distinct_states("FelixHeadTrimHiddenTrims"), None);
        assert_eq!(distinct_states("NoSuchConfiguration"), None);
    }
}
