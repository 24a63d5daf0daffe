//! The registry mirrors `docs/formal/*.cfg`: the same configuration names, and for each the same
//! constants and switches, so `felix check X` checks what `scripts/check_tla.sh X` checks.

use felix_model::head_trim::spec::FelixHeadTrim;

use super::support;

#[test]
fn the_registry_is_exactly_the_cfg_files() {
    // Proves every .cfg file has a registry entry and every entry a .cfg file, each entry sets
    // every CONSTANT and switch to the value its file gives (none left out), and every file,
    // twins included, checks every invariant (`support::assert_registry_is_the_cfg_files`).
    support::assert_registry_is_the_cfg_files::<FelixHeadTrim>();
}

#[test]
fn tlc_checks_stale_holder_retires_on_the_liveness_configuration() {
    // Proves the liveness property is wired into TLC: FelixHeadTrimLiveness.cfg checks the
    // fair specification LiveSpec and the property StaleHolderRetires.
    let files = support::cfg_files::<FelixHeadTrim>();
    let text = files
        .get("FelixHeadTrimLiveness")
        .expect("the liveness .cfg exists");
    assert!(text
        .lines()
        .any(|line| line.trim() == "SPECIFICATION LiveSpec"));
    assert!(text
        .lines()
        .any(|line| line.trim() == felix_names::Invariant::StaleHolderRetires.name()));
}
