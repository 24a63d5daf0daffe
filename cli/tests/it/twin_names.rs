//! One list of twins for every layer: the simulator's (`TwinName::in_layer(Layer::Sim)`, each a
//! switch of `Rules::twin`), the Stateright registries (FelixHeadTrim and ParosTrimJump) and the
//! TLA+ `.cfg` files all hold exactly the twins `felix-names` puts in that layer, and each names
//! the invariant `felix-names` says the twin breaks there. The model never imports the core, so
//! this test (the CLI sees both) is where the three meet.

use felix_core::rules::{Layer, TwinName};
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::paros::spec::ParosTrimJump;
use felix_model::spec::Spec;
use std::path::Path;

fn cfg(spec: &str, twin: TwinName) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/formal")
        .join(format!("{spec}{twin}.cfg"));
    std::fs::read_to_string(path).ok()
}

#[test]
fn every_layer_holds_exactly_its_shared_twins() {
    // Proves, for every twin name: `--twin` takes it iff the simulator layer has it, each model
    // registry has it iff its layer does (same invariant), and a .cfg file exists iff the spec
    // has it and checks that invariant.
    for twin in TwinName::ALL {
        let sim = twin.expected(Layer::Sim);
        assert_eq!(
            TwinName::parse_in(Layer::Sim, twin.name()).is_some(),
            sim.is_some(),
            "{twin}"
        );

        for (layer, spec, registered) in [
            (
                Layer::HeadTrim,
                FelixHeadTrim::NAME,
                FelixHeadTrim::twins()
                    .find(|config| config.twin == Some(twin))
                    .and_then(|config| config.expected_violation()),
            ),
            (
                Layer::Paros,
                ParosTrimJump::NAME,
                ParosTrimJump::twins()
                    .find(|config| config.twin == Some(twin))
                    .and_then(|config| config.expected_violation()),
            ),
        ] {
            let expected = twin.expected(layer);
            assert_eq!(registered, expected, "{layer} {twin}");
            let file = cfg(spec, twin);
            assert_eq!(file.is_some(), expected.is_some(), "{spec}{twin}.cfg");
            if let (Some(text), Some(invariant)) = (file, expected) {
                assert!(
                    text.lines().any(|line| line.trim() == invariant.name()),
                    "{spec}{twin}.cfg does not check {invariant}"
                );
                assert!(
                    text.lines()
                        .any(|line| line.trim() == format!("{twin} = TRUE")),
                    "{spec}{twin}.cfg does not switch {twin} on"
                );
            }
        }
    }
}
