//! What the tests of both specs share, generic over `Spec`: a spec's `.cfg` files and their
//! CONSTANTS, and the facts every spec's registry keeps (every `.cfg` file registered with its
//! constants and switches, every twin one switch from its passing base, names that resolve, the
//! compact search stopping every twin at its invariant). Each spec's tests call these with their
//! own spec and add what is only theirs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use felix_model::check;
use felix_model::spec::{Constants, Spec, SpecConfig};
use felix_names::{Invariant, TwinName};

/// `(name, value)` for every `Name = Value` line of a `.cfg` file's CONSTANTS section.
pub fn constants(text: &str) -> BTreeMap<String, String> {
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

/// The spec's `.cfg` files in `docs/formal` (those named after it), by name.
pub fn cfg_files<S: Spec>() -> BTreeMap<String, String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/formal");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("docs/formal exists") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a name");
        if path.extension().and_then(|e| e.to_str()) == Some("cfg") && name.starts_with(S::NAME) {
            let text = std::fs::read_to_string(&path).expect("a readable .cfg");
            files.insert(name.to_string(), text);
        }
    }
    files
}

/// Asserts the registry holds exactly the spec's `.cfg` files; that each entry sets every
/// CONSTANT and switch to the value its file gives, and no file constant is left out; that every
/// file, twins included, checks TypeOK and every `always` property (so a twin that broke another
/// invariant would show in TLC too); and that a twin's file names the invariant it must break.
pub fn assert_registry_is_the_cfg_files<S: Spec>() {
    let files = cfg_files::<S>();
    let mut names: Vec<String> = S::names().iter().map(|n| n.to_string()).collect();
    names.sort();
    assert_eq!(names, files.keys().cloned().collect::<Vec<_>>());
    for (name, text) in files {
        let config = S::lookup(&name).expect("registered");
        let mut expected = BTreeMap::new();
        for (constant, value) in config.bounds.constants() {
            expected.insert(constant.to_string(), value.to_string());
        }
        for (switch, on) in config.switch_constants() {
            let value = if on { "TRUE" } else { "FALSE" };
            expected.insert(switch.to_string(), value.to_string());
        }
        assert_eq!(constants(&text), expected, "{name}");
        for invariant in std::iter::once(Invariant::TypeOk).chain(S::invariants()) {
            assert!(
                text.lines().any(|line| line.trim() == invariant.name()),
                "{name} does not check {invariant}"
            );
        }
        if let Some(invariant) = config.expected_violation() {
            assert!(text.contains(invariant.name()), "{name}");
        }
    }
}

/// Asserts each twin has a passing base with the same bounds and every rule on, and switches off
/// exactly the rule it is named after; and that the passing configurations are exactly those with
/// every rule on.
pub fn assert_twins_are_one_switch_from_their_base<S: Spec>() {
    for twin in S::twins() {
        let base_name = twin.base.expect("a twin names its base");
        let base = S::lookup(base_name).expect("the base is registered");
        assert_eq!(base.bounds, twin.bounds, "{}", twin.name);
        assert_eq!(base.twin, None, "{base_name} has a rule off");
        let on = switches_on(twin);
        assert_eq!(on, vec![twin.short_name()], "{}", twin.name);
    }
    for config in S::configs() {
        assert_eq!(
            config.expected_violation().is_none(),
            config.twin.is_none(),
            "{}",
            config.name
        );
    }
}

/// The TLA+ switch constants a configuration sets to `TRUE`.
fn switches_on<S: Spec>(config: &SpecConfig<S>) -> Vec<&'static str> {
    config
        .switch_constants()
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| name)
        .collect()
}

/// Asserts every configuration is found by its full name and by its name without the spec's
/// prefix (the main one by `Main` where the spec takes it), the main configuration is named
/// after the spec, an unknown or empty name finds nothing, and no two configurations share a
/// name (a lookup would silently pick the first).
pub fn assert_names_resolve<S: Spec>() {
    for config in S::configs() {
        assert_eq!(S::lookup(config.name), Some(config));
        if config.name != S::NAME || S::MAIN_ALIAS {
            assert_eq!(S::lookup(config.short_name()), Some(config));
        }
    }
    assert_eq!(S::main_config().name, S::NAME);
    assert_eq!(S::lookup("NoSuchConfig"), None);
    assert_eq!(S::lookup(""), None);
    let names = S::names();
    assert_eq!(names.iter().collect::<BTreeSet<_>>().len(), names.len());
}

/// Asserts the spec's twins are exactly the twins `felix-names` puts in its layer, each
/// registered under its own name (what it must break there is `felix-names`' by construction:
/// `SpecConfig::expected_violation`).
pub fn assert_twins_are_the_layers<S: Spec>() {
    let mut registered: Vec<TwinName> = S::twins().map(|c| c.twin.expect("a twin")).collect();
    let mut layer: Vec<TwinName> = TwinName::in_layer(S::LAYER).collect();
    registered.sort_unstable();
    layer.sort_unstable();
    assert_eq!(registered, layer, "{}", S::NAME);
    for twin in S::twins() {
        let name = twin.twin.expect("a twin");
        assert_eq!(twin.short_name(), name.name());
    }
}

/// Asserts the compact search (`felix check --compact`) stops every twin of the spec at its
/// named invariant, with a trace of at least one step.
pub fn assert_compact_stops_every_twin<S: Spec>() {
    for twin in S::twins() {
        let compact = check::check_compact(twin, 1, false, &mut |_| {});
        assert_eq!(
            compact.invariant,
            twin.expected_violation(),
            "{}",
            twin.name
        );
        assert!(compact.trace.len() >= 2, "{}", twin.name);
    }
}
