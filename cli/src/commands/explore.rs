//! `felix explore CONFIG [--addr 127.0.0.1:3000]`: Stateright's Explorer on one configuration.
//!
//! The Explorer is a web UI that walks the state space on demand; it blocks until interrupted.

use crate::exit;
use clap::Args;
use felix_model::check::serve_explorer;
use felix_model::registry::AnyConfig;

/// Arguments of `felix explore`.
#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// The configuration, as its `.cfg` name; a spec's prefix may be dropped.
    pub config: String,
    /// Address to serve the Explorer on.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: String,
}

/// Runs `felix explore`: serves until interrupted.
pub fn run(args: ExploreArgs) -> u8 {
    let config = match crate::commands::check::resolve(std::slice::from_ref(&args.config)) {
        Ok(configs) => configs[0],
        Err(code) => return code,
    };
    // Stateright panics if it cannot bind, so try the address first for a clear message.
    match std::net::TcpListener::bind(&args.addr) {
        Ok(listener) => drop(listener),
        Err(error) => return exit::bad_input(format!("cannot listen on {}: {error}", args.addr)),
    }
    eprintln!(
        "felix: exploring {} on http://{} (Ctrl-C to stop)",
        config.name(),
        args.addr
    );
    match config {
        AnyConfig::HeadTrim(config) => serve_explorer(config, args.addr.as_str()),
        AnyConfig::Paros(config) => serve_explorer(config, args.addr.as_str()),
    }
    exit::OK
}
