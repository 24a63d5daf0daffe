//! The registry mirrors `docs/formal/*.cfg`: the same configuration names, and for each the same
//! constants and switches, so `felix check X` checks what `scripts/check_tla.sh X` checks.

use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::spec::{RuleSwitches, Spec};
use std::collections::BTreeMap;
use std::path::PathBuf;

use felix_model::spec::Expectation;

/// `(name, value)` for every `Name = Value` line of a `.cfg` file's CONSTANTS section.
fn constants(text: &str) -> BTreeMap<String, String> {
    let mut in_constants = false;
    let mut values = BTreeMap::new();
    for line in text.lines() {
        let line = line.split("\\*").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && !line.contains('=') {
            in_constants = line.starts_with("CONSTANT");
            continue;
        }
        if in_constants {
            if let Some((name, value)) = line.split_once('=') {
                values.insert(name.trim().to_string(), value.trim().to_string());
            }
        }
    }
    values
}

fn cfg_files() -> BTreeMap<String, String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/formal");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("docs/formal exists") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a name");
        // ParosTrimJump*.cfg belong to the second spec's registry (tests/paros.rs).
        if path.extension().and_then(|e| e.to_str()) == Some("cfg")
            && name.starts_with(FelixHeadTrim::NAME)
        {
            let text = std::fs::read_to_string(&path).expect("a readable .cfg");
            files.insert(name.to_string(), text);
        }
    }
    files
}

#[test]
fn the_registry_has_exactly_the_cfg_files() {
    // Proves every .cfg file has a registry entry and every entry a .cfg file.
    let files: Vec<String> = cfg_files().keys().cloned().collect();
    let mut names: Vec<String> = FelixHeadTrim::names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.sort();
    assert_eq!(names, files);
}

#[test]
fn every_configuration_has_the_cfg_constants_and_switches() {
    // Proves each registry entry sets every CONSTANT and switch to the value its .cfg file gives,
    // and that no .cfg constant is left out.
    for (name, text) in cfg_files() {
        let config = FelixHeadTrim::lookup(&name).expect("registered");
        let mut expected: BTreeMap<String, String> = BTreeMap::new();
        for (constant, value) in config.bounds.constants() {
            expected.insert(constant.to_string(), value.to_string());
        }
        for (switch, on) in config.switches.constants() {
            expected.insert(
                switch.to_string(),
                if on { "TRUE" } else { "FALSE" }.to_string(),
            );
        }
        assert_eq!(constants(&text), expected, "{name}");
    }
}

#[test]
fn every_cfg_checks_every_invariant() {
    // Proves every .cfg file, twins included, keeps the full list of invariants (the model's
    // `always` properties), so a twin that breaks another invariant would show in TLC too.
    for (name, text) in cfg_files() {
        for invariant in felix_model::head_trim::properties::INVARIANTS {
            assert!(
                text.lines().any(|line| line.trim() == invariant),
                "{name} does not check {invariant}"
            );
        }
        let config = FelixHeadTrim::lookup(&name).expect("registered");
        if let Expectation::Violates(invariant) = config.expectation {
            assert!(text.contains(invariant.name()), "{name}");
        }
    }
}

#[test]
fn tlc_checks_stale_holder_retires_on_the_liveness_configuration() {
    // Proves the liveness property is wired into TLC: FelixHeadTrimLiveness.cfg checks the
    // fair specification LiveSpec and the property StaleHolderRetires.
    let files = cfg_files();
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
