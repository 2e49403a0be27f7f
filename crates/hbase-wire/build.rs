//! Compiles HBase's messages from `proto/*.proto` with protox (pure Rust: no
//! system `protoc` needed) and generates prost messages (no services: the
//! server dispatches on the method name in each request header).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The directory too: a new .proto file must rerun this script (a
    // directory is checked for any file newer than the last run).
    println!("cargo:rerun-if-changed=proto");
    let mut files = Vec::new();
    for entry in std::fs::read_dir("proto")? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "proto") {
            println!("cargo:rerun-if-changed={}", path.display());
            files.push(path);
        }
    }
    files.sort();
    let fds = protox::compile(&files, ["proto"])?;
    prost_build::Config::new().bytes(["."]).compile_fds(fds)?;
    Ok(())
}
