//! Writes the test certificates of `ferrobase_tls::testing::TestPki` into
//! a directory, for test suites outside Rust (the HBase Java client's,
//! scripts/hbase-client-tests.sh with FERROBASE_TLS=1):
//!
//! ```sh
//! cargo run -p ferrobase-tls --features test-certs --example test_certs -- DIR
//! ```

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .ok_or("usage: test_certs DIR (created if missing)")?;
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir)?;
    let pki = ferrobase_tls::testing::TestPki::generate(&dir)?;
    println!("{}", pki.dir.display());
    Ok(())
}
