//! Compiles `proto/ferrobase.proto` with protox (pure Rust: no system
//! `protoc` needed) and generates tonic services with tonic-prost-build.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/ferrobase.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure().bytes(".").compile_fds(fds)?;
    Ok(())
}
