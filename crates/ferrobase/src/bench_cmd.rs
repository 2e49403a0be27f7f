//! `ferrobase bench`: glue to the `ferrobase-bench` crate. Prints the
//! results on stdout and exits with the bench's code (1: the run had
//! errors, 2: the experiment cannot run here, e.g. `regionservers` without
//! etcd); the embedded server
//! is already stopped when this returns or exits.

use ferrobase_bench::cli::{self, BenchArgs, BenchCommand};
use std::io::Write;

/// Runs the command; an error that prevented the run comes back as `Err`.
pub fn run(mut args: BenchArgs) -> anyhow::Result<()> {
    match &mut args.command {
        // `regionservers` starts master and region server processes of
        // this very binary.
        BenchCommand::Experiment(e) => e.exe = std::env::current_exe().ok(),
        // `peer` measures this very binary against HBase (YCSB's
        // `FERROBASE_BIN`) and runs `regionservers` with it.
        BenchCommand::Peer(p) => p.set_exe(std::env::current_exe().ok()),
        _ => {}
    }
    let outcome = cli::run(&args)?;
    let mut out = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error of the benchmark.
    let _ = out.write_all(outcome.output.as_bytes());
    let _ = out.flush();
    if outcome.exit_code != 0 {
        std::process::exit(i32::from(outcome.exit_code));
    }
    Ok(())
}
